# The upgrade test, from the oldest released version that builds on this
# server, and with BF_LONG=1 from each (1.0 predates PostgreSQL 16's
# varatt.h and builds on 15 only): builds the
# release from git history, makes values of several families, tracked
# tables of both methods and single- and multi-column indexes with it
# (test/upgrade/setup.sql), then installs the current library and walks the
# chain of update scripts (sql/bloomfilter--A--B.sql) one ALTER EXTENSION
# ... UPDATE TO at a time.  At every stage (the release, the current library
# under the release's catalog, each version of the chain):
#
#   - every C function of the catalog resolves in the installed library;
#   - test/upgrade/answers.sql gives the released library's answers (no
#     false negative, the same false positives, the same bytes);
#   - test/upgrade/writes.sql (writes into the release's objects, rebuilds,
#     new objects) finds no missing key.
#
# Finally a database updated along the chain has the same extension catalog
# as a fresh CREATE EXTENSION, which runs the full install script of the
# default version (sql/bloomfilter--<default>.sql), and so has a database
# where CREATE EXTENSION runs 1.0's script and the updates, the full script
# hidden (pg_dump --binary-upgrade --schema-only, which dumps the
# extension's members, with their columns in order, compared without OIDs).
#
# The libraries are installed into a private copy of the PostgreSQL
# installation (its servers find their files relative to their binaries):
# the test runs unprivileged, and the installed extension everyone else uses
# is never replaced by 1.0.  The copy starts with the installed extension,
# which must be this checkout's ("make install" first, as for installcheck);
# it is put back after each release.  Skipped when the releases are not in
# the checkout's history (a tarball, a shallow clone).
use strict;
use warnings FATAL => 'all';

use Cwd qw(getcwd);
use File::Basename qw(basename dirname);
use File::Compare qw(compare);
use File::Copy qw(copy);
use File::Path qw(make_path);
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# the releases: version, commit, the newest PostgreSQL major it builds on
# (19 changed heap_update, array_iter and the headers it includes)
my @releases = (
	[ '1.0', '632cb821b28578709105d0cd9558970269596a5f', 15 ],
	[ '1.1', 'e63f92210bc57d94443d7e558d8b39e4474a5557', 18 ]);
# prove runs in the top directory of the checkout
my $src = getcwd();

for my $r (@releases)
{
	my $in_history = eval {
		IPC::Run::run([ 'git', '-C', $src, 'cat-file', '-e', "$r->[1]^{commit}" ],
			'>', '/dev/null', '2>', '/dev/null');
	};
	plan skip_all => "needs git and the released $r->[0] (commit $r->[1]) in "
	  . "the history of $src: a full clone, not a tarball or a shallow clone "
	  . "(git fetch --unshallow)"
	  unless $in_history;
}

# a major no release builds on has nothing to walk from (a catalog of 1.1
# moving to 19 with pg_upgrade is test/t/007_pg_upgrade.pl's)
my ($major) = `pg_config --version` =~ /(\d+)/;
plan skip_all => "no released version builds on PostgreSQL $major"
  unless grep { $major <= $_->[2] } @releases;

# the builds of 1.0 are make processes of their own, not part of the make
# that runs this test (its flags, jobserver and command-line variables)
delete @ENV{qw(MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES)};

my $tmp = PostgreSQL::Test::Utils::tempdir;

# text of a file of the checkout
sub source_file { return slurp_file("$src/$_[0]"); }

sub default_version
{
	my ($control) = @_;
	return slurp_file($control) =~ /^default_version\s*=\s*'([^']*)'/m ? $1 : '';
}

# ok(got eq expected), with a diff -u (- expected, + got) when not
sub same_text
{
	my ($got, $expected, $name) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	return 1 if ok($got eq $expected, $name);
	append_to_file("$tmp/expected", $expected . "\n");
	append_to_file("$tmp/got",      $got . "\n");
	IPC::Run::run([ 'diff', '-u', "$tmp/expected", "$tmp/got" ], '>', \my $diff);
	diag($diff);
	unlink("$tmp/expected", "$tmp/got");
	return 0;
}

my $default = default_version("$src/bloomfilter.control");

# the chain of versions from $from, following the update scripts
sub update_chain
{
	my ($from) = @_;
	my @chain = ($from);
	while (1)
	{
		my $v = $chain[-1];
		my @next =
		  map { basename($_) =~ /^bloomfilter--\Q$v\E--(.+)\.sql$/ ? $1 : () }
		  glob("$src/sql/bloomfilter--$v--*.sql");
		last unless @next;
		is(scalar(@next), 1, "one update script from $v")
		  or BAIL_OUT("several updates from $v: @next");
		push @chain, $next[0];
	}
	is($chain[-1], $default,
		"the chain of update scripts (@chain) ends at default_version");
	return @chain;
}

# a private copy of the installation: each directory at its own path under
# $root, so that the copied binaries find the copied files
sub pg_config
{
	IPC::Run::run([ 'pg_config', "--$_[0]" ], '>', \my $out)
	  or BAIL_OUT("pg_config --$_[0] failed");
	chomp $out;
	return $out;
}
my $root = "$tmp/install";
my %dir = map { $_ => pg_config($_) } qw(bindir pkglibdir sharedir);
for my $d (values %dir)
{
	next if -e "$root$d";
	make_path(dirname("$root$d"));
	system_or_bail('cp', '-R', $d, "$root$d");
}
my $extdir = "$root$dir{sharedir}/extension";
is(default_version("$extdir/bloomfilter.control"),
	$default, "the installed extension is this checkout's version");

# the full install script of default_version, which CREATE EXTENSION runs
# (the Makefile's FULL_SCRIPT, generated from the chain): installed, and
# the same as the checkout's
my $full = "bloomfilter--$default.sql";
ok(-f "$extdir/$full" && compare("$extdir/$full", "$src/sql/$full") == 0,
	"the installed $full is the checkout's");

# the installed (current) extension's files, put back after 1.0
my @current = ("$root$dir{pkglibdir}/bloomfilter.so", glob("$extdir/bloomfilter*"));
mkdir "$tmp/current";
copy($_, "$tmp/current/" . basename($_)) or die "$_: $!" for @current;

# Each file is written beside its place and renamed over it, as install(1)
# does: a backend still exiting with the old library mapped keeps its
# inode (overwriting the mapped file in place kills it with SIGBUS).
sub install_current
{
	for my $f (@current)
	{
		copy("$tmp/current/" . basename($f), "$f.new") or die "$f.new: $!";
		chmod((stat("$tmp/current/" . basename($f)))[2] & 07777, "$f.new");
		rename("$f.new", $f) or die "$f: $!";
	}
	return;
}

# every C function of the catalog has its symbol in the installed library
my $symbols = q{
DO $$
DECLARE
	f record;
	missing text := '';
BEGIN
	FOR f IN SELECT DISTINCT p.probin, p.prosrc FROM pg_proc p
			 JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
			 JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'bloomfilter'
			 WHERE p.prolang = (SELECT oid FROM pg_language WHERE lanname = 'c')
	LOOP
		BEGIN
			EXECUTE format('CREATE FUNCTION pg_temp.bf_symbol_check() RETURNS void AS %L, %L LANGUAGE C',
						   f.probin, f.prosrc);
			DROP FUNCTION pg_temp.bf_symbol_check();
		EXCEPTION WHEN OTHERS THEN
			missing := missing || ' ' || f.prosrc;
		END;
	END LOOP;
	IF missing <> '' THEN
		RAISE EXCEPTION 'C functions missing from the library:%', missing;
	END IF;
END
$$;
};
my $answers_sql = source_file('test/upgrade/answers.sql');
my $writes_sql = source_file('test/upgrade/writes.sql');
# the lines of answers.sql's output whose first field is one of @labels
sub rows
{
	my ($answers, @labels) = @_;
	my %want = map { $_ => 1 } @labels;
	return grep { $want{ $_->[0] } } map { [ split /\|/ ] } split /\n/, $answers;
}

sub catalog
{
	my ($node, $db) = @_;
	IPC::Run::run(
		[
			$node->installed_command('pg_dump'), '--binary-upgrade',
			'--schema-only', '-d', $node->connstr($db)
		],
		'>', \my $dump) or BAIL_OUT("pg_dump of $db failed");
	my @lines =
	  grep {
		!/^--/ && !/^$/ && !/binary_upgrade_set_next_/ && !/pg_catalog\.set_config/
		  && !/binary_upgrade_set_record_init_privs/ && !/^\\(un)?restrict /
	  } split /\n/, $dump;
	for (@lines)
	{
		s/relfrozenxid = '[0-9]*', relminmxid = '[0-9]*'/relfrozenxid = X, relminmxid = X/;
		s/WHERE oid = '[0-9]*'/WHERE oid = X/;
		s/(binary_upgrade_create_empty_extension\(.*)'\{[0-9,]*\}'/$1'{OIDS}'/;
	}
	return join("\n", @lines);
}

# The walk from released version $from (commit $commit): the release is
# built from git history (without LLVM bitcode: only the library is needed,
# and it halves the build; the current library's bitcode stays, so the
# servers run without JIT) into the private installation, a cluster of its
# own makes objects with it, then the current library takes over.
sub walk_from
{
	my ($from, $commit) = @_;
	my @chain = update_chain($from);
	my $old = "$tmp/bloomfilter-$from";
	mkdir $old;
	IPC::Run::run([ 'git', '-C', $src, 'archive', $commit ],
		'|', [ 'tar', '-C', $old, '-xf', '-' ])
	  or BAIL_OUT("git archive of the released $from failed");
	ok( IPC::Run::run([ 'make', '-C', $old, 'with_llvm=no' ],
			'>&', "$tmp/build-$from.log"),
		"the released $from builds")
	  or BAIL_OUT("$from does not build: " . slurp_file("$tmp/build-$from.log"));
	ok( IPC::Run::run(
			[ 'make', '-C', $old, 'with_llvm=no', 'install', "DESTDIR=$root" ],
			'>&', "$tmp/install-$from.log"),
		"the released $from installs into the private installation")
	  or BAIL_OUT("$from does not install: " . slurp_file("$tmp/install-$from.log"));
	is(compare("$root$dir{pkglibdir}/bloomfilter.so", "$tmp/current/bloomfilter.so"),
		1, "the library of $from replaced the current one");

	my $node = PostgreSQL::Test::Cluster->new("upgrade_from_$from",
			install_path => dirname("$root$dir{bindir}"));
	$node->init;
	$node->append_conf('postgresql.conf',
		"jit = off\nclient_min_messages = warning");
	$node->start;
	is($node->safe_psql('postgres', "SELECT setting FROM pg_config WHERE name = 'PKGLIBDIR'"),
		"$root$dir{pkglibdir}", 'the server loads its libraries from the private installation');

	$node->safe_psql('postgres', "CREATE DATABASE $_")
	  for qw(bf_upgrade bf_upgrade_bare bf_upgrade_fresh);
	$node->safe_psql('bf_upgrade', source_file('test/upgrade/setup.sql'));
	$node->safe_psql('bf_upgrade_bare', "CREATE EXTENSION bloomfilter VERSION '$from'");

	my $stage = 0;
	my ($answers_0, $writes_0);

	my $check_stage = sub {
		my ($name) = @_;
		$stage++;
		my ($ret, undef, $stderr) = $node->psql('bf_upgrade', $symbols);
		is($ret, 0, "$name: every C function of the catalog resolves in the library")
		  or diag($stderr);
		my $answers = $node->safe_psql('bf_upgrade', $answers_sql);
		my $writes = $node->safe_psql('bf_upgrade', $writes_sql,
			extra_params => [ '-v', "stage=s$stage" ]);
		if ($stage == 1)
		{
			note $answers;
			$answers_0 = $answers;
			$writes_0 = $writes;
			is( (grep { $_->[2] ne '0' } rows($answers, 'value', 'tracked')),
				0, "$from: no false negative in the values and tracked filters");
			is((grep { $_->[1] ne '0' || $_->[3] ne '0' } rows($answers, 'index')),
				0, "$from: no false negative in the indexes");
			is( (grep { grep { $_ ne 't' } @$_[ 1 .. $#$_ ] }
				  rows($answers, 'value rebuilt', 'tracked late rows')),
				0, "$from: rebuilt values equal, late rows found");
			is(join(' ', map { $_->[1] } rows($answers, 'index scan')),
				'3 1', "$from: the index scans find their rows");
		}
		else
		{
			same_text($answers, $answers_0,
				"$name: the answers of the $from library");
			same_text($writes, $writes_0,
				"$name: writes give what they gave under $from");
		}
		my @missing = grep { /^(written|rebuilt|new objects), misses/ && !/(\|0)+$/ }
		  split /\n/, $writes;
		is(scalar(@missing), 0, "$name: no key written is missing")
		  or diag($writes);
		return;
	};

	$check_stage->($from);
	install_current();
	$check_stage->("current library, $from catalog");
	for my $v (@chain[ 1 .. $#chain ])
	{
		$node->safe_psql($_, "ALTER EXTENSION bloomfilter UPDATE TO '$v'")
		  for qw(bf_upgrade bf_upgrade_bare);
		$check_stage->("updated to $v");
	}

	# an updated catalog is a fresh one: the extension's members as pg_dump
	# --binary-upgrade lists them, without what differs between any two
	# databases (OIDs, transaction ids, pg_dump's random \restrict key)
	$node->safe_psql('bf_upgrade_fresh', 'CREATE EXTENSION bloomfilter');

	my $fresh = catalog($node, 'bf_upgrade_fresh');
	my $members = () = $fresh =~ /ALTER EXTENSION bloomfilter ADD/g;
	cmp_ok($members, '>', 50, 'the dump lists the members of the extension');
	same_text(catalog($node, 'bf_upgrade_bare'), $fresh,
		"the catalog updated along @chain is a fresh install's (from $full)");

	# and CREATE EXTENSION without the full script, which then runs the
	# install script of 1.0 and every update script, makes it too
	my $hidden = "$tmp/" . basename($full);
	rename("$extdir/$full", $hidden) or die "$full: $!";
	$node->safe_psql('postgres', 'CREATE DATABASE bf_upgrade_chain');
	$node->safe_psql('bf_upgrade_chain', 'CREATE EXTENSION bloomfilter');
	rename($hidden, "$extdir/$full") or die "$full: $!";
	is($node->safe_psql('bf_upgrade_chain',
			"SELECT extversion FROM pg_extension WHERE extname = 'bloomfilter'"),
		$default, "without $full, CREATE EXTENSION makes $default from 1.0's script");
	same_text(catalog($node, 'bf_upgrade_chain'), $fresh,
		"the catalog of 1.0's script and the updates at CREATE EXTENSION is ${full}'s");
	$node->stop;
	return;
}

# from the oldest release that builds here, which walks the whole chain;
# with BF_LONG=1 (CI, run-all.sh --all) from every release that builds
my ($node_major) = pg_config('version') =~ /(\d+)/;
my $walked = 0;
for my $r (@releases)
{
	my ($from, $commit, $newest) = @$r;
	if ($node_major > $newest)
	{
		note("the released $from does not build on PostgreSQL $node_major: not walked from");
		next;
	}
	if ($walked && !$ENV{BF_LONG})
	{
		note("not walked from $from (BF_LONG=1 walks from every release)");
		next;
	}
	walk_from($from, $commit);
	$walked++;
}

done_testing();
