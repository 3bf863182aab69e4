# pg_upgrade and pg_dump/pg_restore from an older PostgreSQL major (the
# installation BF_OLD_INSTALL, e.g. /usr/lib/postgresql/18, with this
# tree's bloomfilter installed for it) to the one under test, as users
# move to a new major.  On the old major: objects of every kind
# (test/pg_upgrade/setup.sql: stored bloomfilter, growing and bloomwindow
# values; plain, growing, two-column and partitioned indexes; filters
# tracked by both methods, sized and growing, on a partitioned table, one
# being marked stale; bf_sync_into's table), the preloaded rebuild worker
# configured, and a second database at extension version 1.1.  Then
# pg_upgrade --copy, pg_upgrade --link and pg_dump | pg_restore, each from
# an old cluster of its own, and on the new major:
#
# - the same answers from every object (test/pg_upgrade/answers.sql: no
#   false negative, the same false positives, the same bytes);
# - rows written afterwards are found, by every object;
# - a client's copy of an index filter and of a tracked filter, kept by
#   change sets, continues: the changes since its last position patch its
#   old copy into the current value, or the server says full_refresh;
# - the stale filter stays stale (refuses to answer) until bf_rebuild,
#   which brings back the rows written while it was stale;
# - ALTER EXTENSION bloomfilter UPDATE brings 1.1 to the current version;
# - the rebuild worker runs.
#
# test/suites/67-pg_upgrade.sh installs the extension for the old major
# and sets BF_OLD_INSTALL; without it the test skips itself.
use strict;
use warnings FATAL => 'all';

use Cwd qw(getcwd);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $old_install = $ENV{BF_OLD_INSTALL} // '';
if ($old_install eq ''
	|| !-x "$old_install/bin/pg_ctl"
	|| !-e "$old_install/lib/bloomfilter.so")
{
	plan skip_all =>
	  'needs an older PostgreSQL major with bloomfilter installed for it, named by '
	  . 'BF_OLD_INSTALL (test/suites/67-pg_upgrade.sh sets it up where two majors are installed)';
}

my $src = getcwd();
my $setup = slurp_file("$src/test/pg_upgrade/setup.sql");
my $answers_sql = slurp_file("$src/test/pg_upgrade/answers.sql");
my $new_bindir = `pg_config --bindir`;
chomp $new_bindir;
my $tmp = PostgreSQL::Test::Utils::tempdir;
my $extversion =
  (slurp_file("$src/bloomfilter.control") =~ /^default_version\s*=\s*'([^']+)'/m)[0];

# the rebuild worker, preloaded and on, looking every second
my $worker_conf = q{
shared_preload_libraries = 'bloomfilter'
bloomfilter.auto_rebuild = on
bloomfilter.auto_rebuild_naptime = 1
};
my $worker_sql =
  q{SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'bloomfilter rebuild worker'};

# A change set (docs/FORMAT.md, "Change sets") applied to $old (bytes, or
# undef): magic "BLMP", u16 version, u8 flags, u8, u64 total, u32 runs,
# u32; each run u64 offset, u32 length, u32, then the bytes.
sub apply_patch
{
	my ($old, $patch) = @_;
	my ($magic, $version, $flags, undef, $total, $nruns) = unpack('a4 v C C Q< V V', $patch);
	die "not a change set" unless $magic eq 'BLMP';
	my $new = ($flags & 1) || !defined $old ? "\0" x $total : $old;
	die "a change set for $total bytes, the copy has " . length($new) if length($new) != $total;
	my $pos = 24;
	for (1 .. $nruns)
	{
		my ($off, $len) = unpack('Q< V', substr($patch, $pos, 16));
		substr($new, $off, $len) = substr($patch, $pos + 16, $len);
		$pos += 16 + $len;
	}
	return $new;
}

# a client's state: the position and the copy, from the whole value
sub client_start
{
	my ($node, $changes_call) = @_;
	my ($lsn, $hex) = split /\|/,
	  $node->safe_psql('postgres', "SELECT next_lsn, encode(patch, 'hex') FROM $changes_call");
	return { lsn => $lsn, copy => apply_patch(undef, pack('H*', $hex)) };
}

# $call_since: the changes function's call with %s for the position
sub client_follows
{
	my ($node, $name, $client, $call_since, $value_sql) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my ($lsn, $full, $hex) = split /\|/,
	  $node->safe_psql('postgres',
		sprintf("SELECT next_lsn, full_refresh, encode(patch, 'hex') FROM $call_since",
			$client->{lsn}));
	my $now = pack('H*', $node->safe_psql('postgres', "SELECT encode(($value_sql)::bytea, 'hex')"));
	my $copy = apply_patch($full eq 't' ? undef : $client->{copy}, pack('H*', $hex));
	ok($copy eq $now,
		"$name: the client's copy, patched by the changes since its position, is the value"
		  . ($full eq 't' ? ' (the server sent it whole: full_refresh)' : ''));
	note("$name: full_refresh $full");
	return;
}

# an old cluster with every object, and its answers
sub old_cluster
{
	my ($name) = @_;
	my $old = PostgreSQL::Test::Cluster->new($name, install_path => $old_install);
	$old->init;
	$old->append_conf('postgresql.conf', $worker_conf);
	$old->start;
	$old->safe_psql('postgres', $setup);
	$old->safe_psql('postgres', 'CREATE DATABASE at11');
	$old->safe_psql(
		'at11', q{
CREATE EXTENSION bloomfilter VERSION '1.1';
CREATE TABLE t (k int);
INSERT INTO t SELECT generate_series(1, 5000);
CREATE INDEX t_k ON t USING bloomfilter (k);
SELECT bf_track('t', 'k', 10000, method => 'trigger');
});
	is($old->safe_psql('postgres', $worker_sql), '1', "$name: the worker runs on the old major");
	return $old;
}

# what every path must show on the new major ($node, started)
sub check_new
{
	my ($node, $name, $before, $clients, $restored) = @_;
	my $after = $node->safe_psql('postgres', $answers_sql);

	if (!$restored)
	{
		is($after, $before,
			"$name: the same answers from every object (no false negative, the same false positives and bytes)"
		);
	}
	else
	{
		# a restore builds the indexes anew (a growing one sized from the
		# table it finds): their false positives and bytes may differ, also
		# those of the filters tracked by index (tr_i, tr_ig, tr_p)
		for ($before, $after)
		{
			s/^((?:index\|[^|\n]*|tracked\|tr_(?:i|ig|p))\|\d+)\|\d+$/$1|-/mg;
			s/^index bytes\|.*$/index bytes|-/m;
		}
		is($after, $before,
			"$name: the same answers from every object (no false negative; the values' bytes and the trigger filters' false positives the same)"
		);
	}

	# the stale filter: still refuses, then bf_rebuild brings back its rows
	my ($ret, $out, $err) =
	  $node->psql('postgres', "SELECT bf_might_contain('tr_stale', 'k', 'key-1')");
	ok($ret != 0 && $err =~ /stale/, "$name: the stale filter still refuses to answer");
	$node->safe_psql('postgres', "SELECT bf_rebuild('tr_stale', 'k')");
	is( $node->safe_psql('postgres',
			"SELECT count(*) FROM tr_stale WHERE NOT bf_might_contain('tr_stale', 'k', k)"),
		'0',
		"$name: after bf_rebuild the stale filter has every row, also those written while stale");

	# rows written on the new major
	$node->safe_psql(
		'postgres', q{
INSERT INTO keys SELECT g, true, g, 'key-' || g, md5(g::text)::uuid FROM generate_series(50001, 52000) g;
INSERT INTO ix SELECT i, t, u FROM keys WHERE g > 50000;
INSERT INTO px SELECT i, t FROM keys WHERE g > 50000;
INSERT INTO tr_i SELECT t FROM keys WHERE g > 50000;
INSERT INTO tr_t SELECT t FROM keys WHERE g > 50000;
INSERT INTO tr_ig SELECT t FROM keys WHERE g > 50000;
INSERT INTO tr_tg SELECT t FROM keys WHERE g > 50000;
INSERT INTO tr_p SELECT i, t FROM keys WHERE g > 50000;
INSERT INTO tr_stale SELECT t FROM keys WHERE g > 50000;
INSERT INTO grp_rows SELECT g % 10, t FROM keys WHERE g > 50000;
UPDATE vals SET plain = bf_add_all(plain, (SELECT array_agg(t) FROM keys WHERE g > 50000)),
	growing = bf_add_all(growing, (SELECT array_agg(i) FROM keys WHERE g > 50000)),
	win = bf_window_add_all(win, (SELECT array_agg(t) FROM keys WHERE g > 50000),
							timestamptz '2030-01-01 00:30+00');
});
	is( $node->safe_psql(
			'postgres', q{
SELECT count(*) FILTER (WHERE NOT bf_contains(plain, t)) + count(*) FILTER (WHERE NOT bf_contains(growing, i))
	 + count(*) FILTER (WHERE NOT bf_window_contains(win, t, timestamptz '2030-01-01 01:00+00'))
	 + count(*) FILTER (WHERE NOT bf_index_contains('ix_t', t))
	 + count(*) FILTER (WHERE NOT bf_index_contains('ix_i_grow', i))
	 + count(*) FILTER (WHERE NOT bf_index_contains('ix_iu', ROW(i, u)))
	 + count(*) FILTER (WHERE NOT bf_index_contains('px_t', t))
	 + count(*) FILTER (WHERE NOT bf_might_contain('tr_i', 'k', t))
	 + count(*) FILTER (WHERE NOT bf_might_contain('tr_t', 'k', t))
	 + count(*) FILTER (WHERE NOT bf_might_contain('tr_ig', 'k', t))
	 + count(*) FILTER (WHERE NOT bf_might_contain('tr_tg', 'k', t))
	 + count(*) FILTER (WHERE NOT bf_might_contain('tr_p', 'k', t))
	 + count(*) FILTER (WHERE NOT bf_might_contain('tr_stale', 'k', t))
FROM keys CROSS JOIN vals WHERE present}),
		'0',
		"$name: every key, old and written on the new major, found by every object");
	is( $node->safe_psql(
			'postgres',
			q{SELECT count(*) FILTER (WHERE NOT bf_contains(g.f, r.k)) FROM grp_rows r JOIN grp g USING (gid)}),
		'0',
		"$name: bf_sync_into's filters have every row, old and new");
	# (after a restore, whose filters are new, the server must say
	# full_refresh)
	client_follows($node, "$name, index ix_t", $clients->{index},
		"bf_index_changes('ix_t', '%s')", "bf_index_filter('ix_t')");
	client_follows($node, "$name, tracked tr_t", $clients->{tracked},
		"bf_tracked_changes('tr_t', 'k', '%s')", "bf_tracked_filter('tr_t', 'k')");

	$node->safe_psql('postgres', 'ALTER EXTENSION bloomfilter UPDATE');
	$node->safe_psql('at11', 'ALTER EXTENSION bloomfilter UPDATE');
	is( $node->safe_psql(
			'at11', q{SELECT extversion FROM pg_extension WHERE extname = 'bloomfilter'}),
		$extversion,
		"$name: ALTER EXTENSION bloomfilter UPDATE in the database made at 1.1 gives $extversion");
	$node->safe_psql('at11', 'INSERT INTO t SELECT generate_series(5001, 6000)');
	is( $node->safe_psql(
			'at11',
			q{SELECT count(*) FROM t WHERE NOT bf_index_contains('t_k', k) OR NOT bf_might_contain('t', 'k', k)}),
		'0',
		"$name: the 1.1 database's index and tracked filter have every row after the update");

	ok($node->poll_query_until('postgres', "SELECT ($worker_sql) = 1"),
		"$name: the rebuild worker runs on the new major");
	return;
}

for my $mode ('--copy', '--link')
{
	my $tag = substr($mode, 2);
	my $old = old_cluster("old_$tag");
	my $before = $old->safe_psql('postgres', $answers_sql);
	like($before, qr/^index\|ix_t\|0\|/m, "$tag: answers on the old major");
	my %clients = (
		index => client_start($old, "bf_index_changes('ix_t')"),
		tracked => client_start($old, "bf_tracked_changes('tr_t', 'k')"));
	$old->stop;

	my $new = PostgreSQL::Test::Cluster->new("new_$tag");
	$new->init;
	$new->append_conf('postgresql.conf', $worker_conf);
	# pg_upgrade writes its logs and sockets where it runs
	my $cwd = getcwd();
	chdir $tmp or die "$tmp: $!";
	command_ok(
		[
			'pg_upgrade', '--no-sync',
			'-b', "$old_install/bin",
			'-B', $new_bindir,
			'-d', $old->data_dir,
			'-D', $new->data_dir,
			'-p', $old->port,
			'-P', $new->port,
			'-s', $new->host,
			$mode
		],
		"pg_upgrade $mode from " . $old->pg_version . ' to ' . $new->pg_version);
	chdir $cwd or die "$cwd: $!";
	$new->start;
	check_new($new, "pg_upgrade $mode", $before, \%clients, 0);
	$new->stop;
}

# pg_dump (the new major's, as the documentation advises) of the old
# cluster, restored into a new one
my $old = old_cluster('old_dump');
my $before = $old->safe_psql('postgres', $answers_sql);
my %clients = (
	index => client_start($old, "bf_index_changes('ix_t')"),
	tracked => client_start($old, "bf_tracked_changes('tr_t', 'k')"));
my $new = PostgreSQL::Test::Cluster->new('new_dump');
$new->init;
$new->append_conf('postgresql.conf', $worker_conf);
$new->start;
for my $db ('postgres', 'at11')
{
	command_ok(
		[ "$new_bindir/pg_dump", '-Fc', '-f', "$tmp/$db.dump", '-d', $old->connstr($db) ],
		"pg_dump of $db from " . $old->pg_version);
	$new->safe_psql('postgres', "CREATE DATABASE $db") unless $db eq 'postgres';
	command_ok(
		[ "$new_bindir/pg_restore", '--exit-on-error', '-d', $new->connstr($db), "$tmp/$db.dump" ],
		"pg_restore of $db into " . $new->pg_version);
}
$old->stop;
check_new($new, 'pg_dump and pg_restore', $before, \%clients, 1);
$new->stop;

done_testing();
