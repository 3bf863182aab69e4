# Helpers shared by the TAP tests of test/t (PostgreSQL::Test::Cluster):
# the processes of a running server, and clients writing to it, for tests
# that crash it.
package BfServer;

use strict;
use warnings FATAL => 'all';

use Exporter 'import';
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;

our @EXPORT = qw(crash_primary crash_standby crash_server server_children start_client lines_of);

# A started primary for a crash test, with settings $extra added: room for
# the clients; few checkpoints besides those the test asks for, but WAL
# bounded (bulk loaders write gigabytes on a fast machine, and the version
# matrix runs the tests in a root of limited size); no log line per
# statement (hundreds of thousands of INSERTs).
sub crash_primary
{
	my ($extra) = @_;
	my $primary = PostgreSQL::Test::Cluster->new('primary');

	$primary->init(allows_streaming => 1);
	$primary->append_conf(
		'postgresql.conf', q{
shared_buffers = 16MB
max_connections = 20
checkpoint_timeout = 30min
max_wal_size = 256MB
log_statement = none
} . $extra);
	$primary->start;
	return $primary;
}

# A started replica of $primary, streaming through a slot reserved before
# its base backup (the primary keeps the WAL it has not received, however
# much recovery writes).
sub crash_standby
{
	my ($primary) = @_;
	my $standby = PostgreSQL::Test::Cluster->new('standby');

	$primary->safe_psql('postgres',
		"SELECT pg_create_physical_replication_slot('bf_crash_standby', true)");
	$primary->backup('base');
	$standby->init_from_backup($primary, 'base', has_streaming => 1);
	$standby->append_conf('postgresql.conf', "primary_slot_name = 'bf_crash_standby'");
	$standby->start;
	return $standby;
}

# The processes whose parent is the postmaster of $node, from /proc (after
# the "(comm)" of stat: the state, then the parent's pid).  A process that
# ends while they are listed is left out.
sub server_children
{
	my ($node) = @_;
	my ($pmpid) = split /\n/, slurp_file($node->data_dir . '/postmaster.pid');
	my @children;

	opendir(my $proc, '/proc') or die "cannot read /proc: $!";
	for my $pid (grep { /^\d+$/ } readdir $proc)
	{
		open(my $fh, '<', "/proc/$pid/stat") or next;
		my $stat = <$fh>;
		close $fh;
		push @children, $pid
		  if defined $stat && $stat =~ /.*\)\s+\S+\s+(\d+)/s && $1 == $pmpid;
	}
	closedir $proc;
	return @children;
}

# Kill the whole server at once, the postmaster and every backend, and
# the client harnesses given; wait until its processes are gone, so that
# $node->start recovers it.
sub crash_server
{
	my ($node, @harnesses) = @_;
	my @children = server_children($node);

	$node->kill9;
	kill 'KILL', @children;
	$_->kill_kill for @harnesses;
	for (1 .. 100)
	{
		last unless grep { -e "/proc/$_" } @children;
		select(undef, undef, undef, 0.1);
	}
	unlink($node->data_dir . '/postmaster.pid');
	return;
}

# Start a psql on $node running $count statements made by $statements
# (called with 1 .. $count), from $tmp/$name.sql; its output (a printed line
# = a committed statement) goes to $tmp/$name.out.  Returns the harness.
sub start_client
{
	my ($node, $tmp, $name, $count, $statements) = @_;
	open(my $script, '>', "$tmp/$name.sql") or die "$tmp/$name.sql: $!";
	print $script $statements->($_) for 1 .. $count;
	close $script;
	return IPC::Run::start(
		[
			'psql', '-X', '-q', '-At', '-v', 'ON_ERROR_STOP=1',
			'-d', $node->connstr('postgres'), '-f', "$tmp/$name.sql"
		],
		'>', "$tmp/$name.out", '2>', "$tmp/$name.err");
}

# the non-empty lines of a client's output (a missing file has none)
sub lines_of
{
	my ($file) = @_;
	return () unless -e $file;
	return grep { $_ ne '' } split /\n/, slurp_file($file);
}

1;
