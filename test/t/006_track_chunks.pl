# The trigger method's chunked filters under concurrent writers: no
# deadlock, no lost bit, and a crash with a streaming replica.
#
# First, 8 pgbench clients insert batches of 10 random keys (each batch one
# statement, so that its sync trigger locks several chunks) into a table
# whose filter has 10 chunks, where every batch collides with the others:
# no transaction may fail (a deadlock between the sync triggers would be
# one), and every key must be found.
#
# Then the crash: clients insert single rows (each its own transaction)
# and batches of 2 000 rows into a trigger-tracked table (capacity 200 000:
# chunks shared by many writers), a CHECKPOINT happens mid-stream, and the
# postmaster is killed with SIGKILL.  After crash recovery every key whose
# INSERT had committed (psql printed it) must be found by bf_might_contain
# on the primary and, after catch-up, on the replica, whose filter must be
# byte-identical to the primary's.
#
# Last, a crash in the middle of an online rebuild (bf_rebuild
# concurrently, waiting to swap its filter in): after recovery the filter
# is the one from before, not stale, with one row per chunk and no orphan;
# and in the middle of one into another size, whose writers' log is gone.
#
# BF_CRASH_SECONDS: how long the clients run before the crash (4).
use strict;
use warnings FATAL => 'all';

use IPC::Run;
use FindBin;
use lib $FindBin::RealBin;
use BfServer;
use Time::HiRes qw(sleep);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $tmp = PostgreSQL::Test::Utils::tempdir;
my $seconds = $ENV{BF_CRASH_SECONDS} || 4;
my $clients = 4;


my $primary = crash_primary("deadlock_timeout = 100ms\n");

# ---- 8 writers, a filter of 10 chunks
$primary->safe_psql(
	'postgres', q{
CREATE EXTENSION bloomfilter;
CREATE TABLE w (k bigint NOT NULL);
INSERT INTO w VALUES (0);
SELECT bf_track('w', 'k', 1000, 0.01, method => 'trigger');
});
my $nchunks = $primary->safe_psql(
	'postgres', q{
SELECT count(*) FROM bf_registry_chunk c JOIN bf_registry r USING (id)
WHERE r.tbl = 'w'::regclass});
is($nchunks, 10, 'the filter of capacity 1 000 has 10 chunks');
open(my $script, '>', "$tmp/batch.sql") or die "$tmp/batch.sql: $!";
print $script
  "INSERT INTO w SELECT (random() * 1e15)::bigint FROM generate_series(1, 10);\n";
close $script;
my ($out, $err) = ('', '');
my $ok = IPC::Run::run(
	[
		'pgbench', '-n', '-c', '8', '-j', '8', '-T', '3', '-f', "$tmp/batch.sql",
		'-d', $primary->connstr('postgres')
	],
	'>', \$out, '2>', \$err);
ok($ok, 'pgbench with 8 writers ends without error') or diag($err);
my ($done) = $out =~ /number of transactions actually processed: (\d+)/;
note "8 writers: $done batches of 10 keys";
cmp_ok($done // 0, '>', 100, 'more than 100 batches written');
my ($failed) = $out =~ /number of failed transactions: (\d+)/;
is($failed // 0, 0, 'no transaction failed (no deadlock between sync triggers)');
ok(!$primary->log_contains(qr/deadlock detected/), 'no deadlock in the log');
is( $primary->safe_psql(
		'postgres', q{SELECT count(*) FROM w WHERE NOT bf_might_contain('w', 'k', k)}),
	0,
	'every key of the 8 writers is found');
is( $primary->safe_psql(
		'postgres', q{
SELECT substring(bf_tracked_filter('w', 'k')::bytea FROM 65) =
       substring(bf_add_all(bf_create(1000, 0.01, (bf_info(bf_tracked_filter('w', 'k'))).seed),
                            ARRAY(SELECT k FROM w))::bytea FROM 65)}),
	't',
	'the chunks hold exactly the bits of the keys written');

# ---- 8 writers of a growing filter: single rows, batches of 10 and of
# 2 000 keys (a bulk statement reads the whole filter), through many
# growths from a first layer of 1 000 keys, while writers that read the
# layers before a growth write on
$primary->safe_psql(
	'postgres', q{
CREATE TABLE g (k bigint NOT NULL);
SELECT bf_track('g', 'k', method => 'trigger');
});
open($script, '>', "$tmp/grow.sql") or die "$tmp/grow.sql: $!";
print $script
  "\\set n random(1, 100)\n"
  . "INSERT INTO g SELECT (random() * 1e15)::bigint FROM generate_series(1, CASE WHEN :n = 1 THEN 2000 WHEN :n <= 50 THEN 10 ELSE 1 END);\n";
close $script;
($out, $err) = ('', '');
$ok = IPC::Run::run(
	[
		'pgbench', '-n', '-c', '8', '-j', '8', '-T', '3', '-f', "$tmp/grow.sql",
		'-d', $primary->connstr('postgres')
	],
	'>', \$out, '2>', \$err);
ok($ok, 'pgbench with 8 writers of a growing filter ends without error') or diag($err);
($failed) = $out =~ /number of failed transactions: (\d+)/;
is($failed // 0, 0, 'no transaction on the growing filter failed');
my ($gkeys, $glayers, $gmissed) = split ' ',
  $primary->safe_psql(
	'postgres', q{
SELECT (SELECT count(*) FROM g) || ' ' ||
       (SELECT count(*) FROM bf_layers(bf_tracked_filter('g', 'k'))) || ' ' ||
       (SELECT count(*) FROM g WHERE NOT bf_might_contain('g', 'k', k))});
note "growing filter: $gkeys keys in $glayers layers";
cmp_ok($glayers, '>', 3, 'the growing filter grew more than 3 times');
is($gmissed, 0, 'every key of the 8 writers of the growing filter is found');

# ---- the crash
$primary->safe_psql(
	'postgres', q{
CREATE TABLE t (k text NOT NULL);
INSERT INTO t SELECT 'pre' || g FROM generate_series(1, 1000) g;
SELECT bf_track('t', 'k', 200000, 0.01, method => 'trigger');
});
my $standby = crash_standby($primary);

my @workers;
for my $c (1 .. $clients)
{
	push @workers, start_client($primary, $tmp, "committed.$c", 200000,
		sub { "INSERT INTO t VALUES ('c$c-$_[0]') RETURNING k;\n" });
}
push @workers, start_client(
	$primary, $tmp, 'batches', 100000,
	sub {
		"INSERT INTO t SELECT 'b$_[0]-' || g FROM generate_series(1, 2000) g;\n"
		  . "SELECT 'b$_[0]';\n";
	});

sleep($seconds / 2);
$primary->safe_psql('postgres', 'CHECKPOINT');
sleep($seconds / 2);

my @children = server_children($primary);
$primary->kill9;
$_->finish for @workers;

my @committed = map { lines_of("$tmp/committed.$_.out") } 1 .. $clients;
my @batches = lines_of("$tmp/batches.out");
note "killed the postmaster with "
  . scalar(@committed)
  . " committed inserts and "
  . scalar(@batches)
  . " committed batches";
cmp_ok(scalar(@committed), '>', 100,
	'more than 100 single-row inserts committed before the crash');
cmp_ok(scalar(@batches), '>', 1, 'more than one batch committed before the crash');

for (1 .. 100)
{
	last unless grep { kill 0, $_ } @children;
	sleep(0.2);
}
unlink($primary->data_dir . '/postmaster.pid');
ok($primary->start(fail_ok => 1), 'the primary restarts after SIGKILL')
  or BAIL_OUT('the primary did not restart');

append_to_file("$tmp/keys", join('', map { "$_\n" } @committed));
append_to_file("$tmp/batches", join('', map { "$_\n" } @batches));
my ($miss, $miss_row, $total, $miss_batch) = split ' ',
  $primary->safe_psql(
	'postgres', qq{
CREATE TEMP TABLE keys (k text);
\\copy keys FROM '$tmp/keys'
CREATE TEMP TABLE batches (b text);
\\copy batches FROM '$tmp/batches'
SELECT count(*) FILTER (WHERE NOT bf_might_contain('t', 'k', k)) || ' ' ||
       (SELECT count(*) FROM keys LEFT JOIN t USING (k) WHERE t.k IS NULL) || ' ' ||
       count(*) || ' ' ||
       (SELECT count(*) FROM batches, generate_series(1, 2000) g
        WHERE NOT bf_might_contain('t', 'k', b || '-' || g))
FROM keys;
});
is($total, scalar(@committed), 'every committed key loaded for the check');
is($miss_row, 0, 'primary: no committed row lost');
is($miss, 0, 'primary: every committed single-row key in the filter');
is($miss_batch, 0, 'primary: every key of the committed batches in the filter');

$primary->safe_psql('postgres', 'CHECKPOINT');
my $target = $primary->safe_psql('postgres', 'SELECT pg_current_wal_lsn()');
ok( $standby->poll_query_until(
		'postgres', "SELECT pg_last_wal_replay_lsn() >= '$target'::pg_lsn"),
	'the replica catches up with the recovered primary');
my $rows = q{
SELECT count(*) FILTER (WHERE NOT bf_might_contain('t', 'k', k)) || ' ' || count(*) FROM t};
my ($p_miss, $p_total) = split ' ', $primary->safe_psql('postgres', $rows);
my ($s_miss, $s_total) = split ' ', $standby->safe_psql('postgres', $rows);
is($s_total, $p_total, 'the replica has as many rows of t as the primary');
is($p_miss, 0, 'primary: every row of t in the filter');
is($s_miss, 0, 'replica: every row of t in the filter');
my $md5 = q{SELECT md5(bf_tracked_filter('t', 'k')::bytea)};
is( $standby->safe_psql('postgres', $md5),
	$primary->safe_psql('postgres', $md5),
	"the replica's filter is byte-identical to the primary's");

# a crash in the middle of an online rebuild (bf_rebuild concurrently): it
# has read the table and waits to swap its filter in for a writer in
# flight; the server is killed.  After recovery the filter answers for
# every row, is not stale, and its chunks are the live filter's, none
# left over from the rebuild.
my @one = ('psql', '-X', '-q', '-At', '-d', $primary->connstr('postgres'));

# a writer that inserts $key and stays in its transaction, then the
# rebuild $sql, which waits for it: both running; $what names the wait
sub rebuild_waiting
{
	my ($key, $sql, $what) = @_;
	my $w = IPC::Run::start(
		[ @one, '-c', 'BEGIN', '-c', "INSERT INTO t VALUES ('$key')", '-c', 'SELECT pg_sleep(600)' ],
		'>', "$tmp/writer.out", '2>', "$tmp/writer.err");
	$primary->poll_query_until('postgres',
		"SELECT count(*) > 0 FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(600)'");
	my $r = IPC::Run::start([ @one, '-c', $sql ], '>', "$tmp/rebuild.out", '2>', "$tmp/rebuild.err");
	ok( $primary->poll_query_until(
			'postgres', q{
SELECT count(*) > 0 FROM pg_stat_activity
WHERE query LIKE 'SELECT bf_rebuild%' AND wait_event_type = 'Lock'}),
		$what);
	return ($w, $r);
}
my $before = $primary->safe_psql('postgres', $md5);
my ($writer, $rebuild) = rebuild_waiting('in flight',
	"SELECT bf_rebuild('t', 'k', concurrently => true)",
	'an online rebuild waits to swap its filter in');
crash_server($primary, $writer, $rebuild);
$primary->start;
is( $primary->safe_psql(
		'postgres', q{SELECT count(*) FROM t WHERE NOT bf_might_contain('t', 'k', k)}),
	'0', 'after a crash mid-rebuild: every row found');
is( $primary->safe_psql(
		'postgres', q{
SELECT stale, (SELECT count(*) FROM bf_registry_chunk c JOIN bf_registry r USING (id)
               WHERE r.tbl = 't'::regclass) = (octet_length(bf_tracked_filter('t', 'k')::bytea) - 64 + 127) / 128,
       (SELECT count(*) FROM bf_registry_chunk c WHERE NOT EXISTS (SELECT FROM bf_registry r WHERE r.id = c.id))
FROM bf_tracked WHERE tbl = 't'::regclass}),
	'f|t|0',
	'after a crash mid-rebuild: not stale, one row per chunk, no orphan');
is($primary->safe_psql('postgres', $md5),
	$before, 'the filter is as it was before the rebuild and the write in flight');
$primary->safe_psql('postgres', "SELECT bf_rebuild('t', 'k', concurrently => true)");
is( $primary->safe_psql(
		'postgres', q{SELECT count(*) FROM t WHERE NOT bf_might_contain('t', 'k', k)}),
	'0', 'and a rebuild after it completes');

# the same for a rebuild into another size, which waits for a writer in
# flight while another writer logs its key for it: after
# recovery the log is empty (unlogged), the filter is the one from before
# with the logged key in it, and a rebuild after it completes
($writer, $rebuild) = rebuild_waiting('in flight too',
	"SELECT bf_rebuild('t', 'k', 400000, concurrently => true)",
	'a rebuild into another size waits for a writer in flight');
$primary->safe_psql('postgres', "INSERT INTO t VALUES ('logged')");
is($primary->safe_psql('postgres', 'SELECT count(*) FROM bf_registry_pending'),
	'1', 'a writer during that rebuild logged its key');
crash_server($primary, $writer, $rebuild);
$primary->start;
is( $primary->safe_psql(
		'postgres', q{
SELECT (SELECT count(*) FROM bf_registry_pending) || ' ' ||
       (SELECT count(*) FROM t WHERE NOT bf_might_contain('t', 'k', k)) || ' ' ||
       (SELECT capacity FROM bf_tracked WHERE tbl = 't'::regclass)}),
	'0 0 200000',
	'after a crash mid-rebuild into another size: no log left, every row found, the old size');
$primary->safe_psql('postgres', "SELECT bf_rebuild('t', 'k', 400000, concurrently => true)");
is( $primary->safe_psql(
		'postgres', q{
SELECT (SELECT count(*) FROM t WHERE NOT bf_might_contain('t', 'k', k)) || ' ' ||
       (SELECT capacity FROM bf_tracked WHERE tbl = 't'::regclass)}),
	'0 400000', 'and a rebuild into another size after it completes');

# a dump restored into another cluster, whose transaction ids are still
# below the ones the chunks were written with: change sets from positions
# the new cluster gave out are patches, not whole values
$primary->safe_psql('postgres', 'CREATE DATABASE small');
$primary->safe_psql(
	'small', q{
CREATE EXTENSION bloomfilter;
CREATE TABLE s (k int);
INSERT INTO s SELECT generate_series(1, 500);
SELECT bf_track('s', 'k', 10000, method => 'trigger');
INSERT INTO s VALUES (501);
});
my $other = PostgreSQL::Test::Cluster->new('other');
$other->init;
$other->start;
cmp_ok(
	$other->safe_psql('postgres', 'SELECT pg_current_xact_id()::text::bigint'),
	'<',
	$primary->safe_psql('small', "SELECT max(written::text::bigint) FROM bf_registry_chunk"),
	'the new cluster is at lower transaction ids than the chunks were written at');
$other->safe_psql('postgres', 'CREATE DATABASE small');
my $dump = "$tmp/small.dump";
$primary->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $primary->connstr('small') ],
	'pg_dump of a database with a chunked filter');
$other->command_ok([ 'pg_restore', '--exit-on-error', '-d', $other->connstr('small'), $dump ],
	'restored into another cluster');
is( $other->safe_psql(
		'small', q{
CREATE TABLE pos AS SELECT next_lsn FROM bf_tracked_changes('s', 'k', NULL);
SELECT c.full_refresh FROM pos, bf_tracked_changes('s', 'k', pos.next_lsn) c;
}),
	'f',
	'a position of the new cluster gets a patch, not the whole value');
is( $other->safe_psql(
		'small', q{
INSERT INTO s VALUES (502);
SELECT c.full_refresh, length(c.patch) BETWEEN 24 + 16 + 64 + 128 AND 24 + 32 + 64 + 128
FROM pos, bf_tracked_changes('s', 'k', pos.next_lsn) c;
}),
	'f|t',
	'a write after the restore is in the next patch: the header and one chunk');
$other->stop;

done_testing();
