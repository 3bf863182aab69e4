# Crash test of the bloomfilter index access method, with a streaming replica.
#
# Several clients insert single rows (each its own transaction) into a table
# with a single-column, a two-column and a growing bloomfilter index (capacity
# 2 000, growth 2: it grows layer after layer while the keys arrive and when
# the crash comes); two clients load batches in transactions of 20 000 and of
# 300 000 rows (the inserting backend buffers their keys and writes them page
# by page, when its buffer fills and before commit); a transaction is
# prepared; a CHECKPOINT happens mid-stream (so full-page images and
# generic-WAL deltas are replayed); then the postmaster is killed with
# SIGKILL.  After crash recovery, every key whose INSERT had committed (psql
# printed its RETURNING row, or the line after the batch) must be reported
# present by bf_index_contains on the primary and, after catch-up, on the
# replica (on a replication slot, so that the WAL it needs is kept whatever
# the checkpoints do), whose filters must be byte-identical to the primary's;
# so must the keys of the prepared transaction, committed after the restart.
#
# BF_CRASH_SECONDS: how long the clients run before the crash (4).
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use BfServer;
use Time::HiRes qw(sleep);
use PostgreSQL::Test::Utils;
use Test::More;

my $seconds = $ENV{BF_CRASH_SECONDS} || 4;
my $clients = 4;
my $tmp = PostgreSQL::Test::Utils::tempdir;


my $primary = crash_primary("max_prepared_transactions = 4\n");

$primary->safe_psql(
	'postgres', q{
CREATE EXTENSION bloomfilter;
CREATE TABLE t (k text NOT NULL, n int NOT NULL);
INSERT INTO t SELECT 'pre' || g, g FROM generate_series(1, 1000) g;
CREATE INDEX t_k ON t USING bloomfilter (k) WITH (capacity = 4000000);
CREATE INDEX t_nk ON t USING bloomfilter (n, k) WITH (capacity = 4000000);
CREATE INDEX t_g ON t USING bloomfilter (k) WITH (capacity = 2000, growth = 2);
});

my $standby = crash_standby($primary);

# the clients: one psql each running a script; a printed line = committed
my @workers;
# single-row inserts, one transaction each
for my $c (1 .. $clients)
{
	push @workers, start_client($primary, $tmp, "committed.$c", 200000,
		sub { "INSERT INTO t VALUES ('c$c-$_[0]', $_[0]) RETURNING k || '|' || n;\n" }
	);
}
# bulk loaders: a batch per transaction, its number printed once committed
for my $size (20000, 300000)
{
	push @workers, start_client(
		$primary, $tmp, "batches.$size", 1000,
		sub {
			"INSERT INTO t SELECT 'b$size-$_[0]-' || g, g FROM generate_series(1, $size) g;\n"
			  . "SELECT '$size|$_[0]';\n";
		});
}
# a prepared transaction, committed after the crash
$primary->safe_psql(
	'postgres', q{
BEGIN;
INSERT INTO t SELECT 'prepared-' || g, g FROM generate_series(1, 5000) g;
PREPARE TRANSACTION 'bf_crash';
});

sleep($seconds / 2);
$primary->safe_psql('postgres', 'CHECKPOINT');
sleep($seconds / 2);

my @children = server_children($primary);
$primary->kill9;
# the clients end when their backends notice the postmaster's death
$_->finish for @workers;

my @committed = map { lines_of("$tmp/committed.$_.out") } 1 .. $clients;
my @batches = map { lines_of("$tmp/batches.$_.out") } (20000, 300000);
note "killed the postmaster with "
  . scalar(@committed)
  . " committed inserts from $clients clients and "
  . scalar(@batches)
  . " committed batches";
cmp_ok(scalar(@committed), '>', 100,
	'more than 100 single-row inserts committed before the crash');
cmp_ok(scalar(lines_of("$tmp/batches.20000.out")),
	'>', 1, 'more than one batch of 20 000 rows committed before the crash');

# a killed postmaster leaves its children running until they notice; its
# shared memory stays in use until then
for (1 .. 100)
{
	last unless grep { kill 0, $_ } @children;
	sleep(0.2);
}
is(scalar(grep { kill 0, $_ } @children),
	0, "the killed postmaster's children have exited");

# crash recovery (the dead postmaster's pid file would make pg_ctl -w wait
# for its timeout)
unlink($primary->data_dir . '/postmaster.pid');
my $log_offset = -s $primary->logfile;
ok($primary->start(fail_ok => 1), 'the primary restarts after SIGKILL')
  or BAIL_OUT('the primary did not restart');
ok( $primary->log_contains(
		qr/redo done|database system was not properly shut down/, $log_offset),
	"crash recovery in the primary's log");
$primary->safe_psql('postgres', "COMMIT PREPARED 'bf_crash'");

# every committed single-row insert: in t and in each filter
append_to_file("$tmp/keys", join('', map { "$_\n" } @committed));
my ($miss_k, $miss_nk, $miss_g, $miss_row, $total) = split ' ',
  $primary->safe_psql(
	'postgres', qq{
CREATE TEMP TABLE keys (k text, n int);
\\copy keys FROM '$tmp/keys' (FORMAT text, DELIMITER '|')
SELECT count(*) FILTER (WHERE NOT bf_index_contains('t_k', k)) || ' ' ||
       count(*) FILTER (WHERE NOT bf_index_contains('t_nk', ROW(n, k))) || ' ' ||
       count(*) FILTER (WHERE NOT bf_index_contains('t_g', k)) || ' ' ||
       (SELECT count(*) FROM keys LEFT JOIN t USING (k) WHERE t.k IS NULL) || ' ' ||
       count(*)
FROM keys;
});
is($total, scalar(@committed), 'every committed key loaded for the check');
is($miss_row, 0, 'primary: no committed row lost');
is($miss_k, 0, 'primary: every committed key in t_k');
is($miss_nk, 0, 'primary: every committed key in the two-column t_nk');
is($miss_g, 0, 'primary: every committed key in the growing t_g');

my $layers = $primary->safe_psql('postgres',
	"SELECT count(*) FROM bf_layers(bf_index_filter('t_g'))");
cmp_ok($layers, '>', 3, 'the growing index grew past 3 layers');

is( $primary->safe_psql(
		'postgres', q{
SELECT count(*) FROM generate_series(1, 1000) g
WHERE NOT bf_index_contains('t_k', 'pre' || g)}),
	0,
	"primary: the keys of the index build in t_k");

# the committed batches
append_to_file("$tmp/batches", join('', map { "$_\n" } @batches));
my $batch_total;
($miss_k, $miss_nk, $miss_g, $batch_total) = split ' ',
  $primary->safe_psql(
	'postgres', qq{
CREATE TEMP TABLE batches (size int, i int);
\\copy batches FROM '$tmp/batches' (FORMAT text, DELIMITER '|')
SELECT count(*) FILTER (WHERE NOT bf_index_contains('t_k', 'b' || size || '-' || i || '-' || g)) || ' ' ||
       count(*) FILTER (WHERE NOT bf_index_contains('t_nk', ROW(g, 'b' || size || '-' || i || '-' || g))) || ' ' ||
       count(*) FILTER (WHERE NOT bf_index_contains('t_g', 'b' || size || '-' || i || '-' || g)) || ' ' ||
       count(*)
FROM batches, generate_series(1, size) g;
});
note "$batch_total keys of committed batches";
is($miss_k, 0, 'primary: every key of the committed batches in t_k');
is($miss_nk, 0, 'primary: every key of the committed batches in t_nk');
is($miss_g, 0, 'primary: every key of the committed batches in t_g');

is( $primary->safe_psql(
		'postgres', q{
SELECT count(*) FROM generate_series(1, 5000) g
WHERE NOT bf_index_contains('t_k', 'prepared-' || g)
   OR NOT bf_index_contains('t_nk', ROW(g, 'prepared-' || g))
   OR NOT bf_index_contains('t_g', 'prepared-' || g)}),
	0,
	'primary: every key of the transaction prepared before the crash in each filter'
);

# the replica catches up and answers the same
$primary->safe_psql('postgres', 'CHECKPOINT');
my $target = $primary->safe_psql('postgres', 'SELECT pg_current_wal_lsn()');
ok( $standby->poll_query_until(
		'postgres', "SELECT pg_last_wal_replay_lsn() >= '$target'::pg_lsn"),
	'the replica catches up with the recovered primary');

# a replica cannot load the key list: check every row of t (a superset of the
# committed keys, as checked on the primary) and the row count
my $rows = q{
SELECT count(*) FILTER (WHERE NOT bf_index_contains('t_k', k)) || ' ' ||
       count(*) FILTER (WHERE NOT bf_index_contains('t_nk', ROW(n, k))
                           OR NOT bf_index_contains('t_g', k)) || ' ' ||
       count(*)
FROM t};
my ($p_miss_k, $p_miss_other, $p_total) = split ' ',
  $primary->safe_psql('postgres', $rows);
my ($s_miss_k, $s_miss_other, $s_total) = split ' ',
  $standby->safe_psql('postgres', $rows);
note "rows of t: primary $p_total, replica $s_total";
is($s_total, $p_total, 'the replica has as many rows of t as the primary');
is($p_miss_k, 0, 'primary: every row of t in t_k');
is($p_miss_other, 0, 'primary: every row of t in t_nk and t_g');
is($s_miss_k, 0, 'replica: every row of t in t_k');
is($s_miss_other, 0, 'replica: every row of t in t_nk and t_g');

my $md5 = q{
SELECT md5(bf_index_filter('t_k')::bytea) || ' ' || md5(bf_index_filter('t_nk')::bytea) || ' ' ||
       md5(bf_index_filter('t_g')::bytea)};
is( $standby->safe_psql('postgres', $md5),
	$primary->safe_psql('postgres', $md5),
	"the replica's filters are byte-identical to the primary's");

done_testing();
