# Per-filter statistics (bloomfilter in shared_preload_libraries): every
# lookup path counts its filter's lookups and "absent" answers --
# bf_might_contain of both methods, bf_index_contains, the bitmap scan of
# a bloomfilter index, a scan guard and the scan it skipped -- in
# bf_stat_filters once the transaction ends;
# bloomfilter.track_stats = off counts nothing; another database's counts
# are not shown; everyone may read them, only superusers and those granted
# EXECUTE may reset them; the counts survive a clean restart and start
# from zero after an immediate stop (a crash), as PostgreSQL's own
# statistics (18 and later: they are a kind of them; 15 to 17: a file of
# pg_stat/ written at shutdown); the counts of a dropped relation go with
# it when the drop commits.
#
# On 18 and later PostgreSQL flushes a backend's counts between
# transactions, at most once a second, and when the backend exits, which
# may come after the next session reads them: every read of counts waits
# for the expected value (poll_query_until) before comparing it.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('main');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'bloomfilter'\n");
$node->start;

$node->safe_psql(
	'postgres', q{
SET client_min_messages = warning;
CREATE EXTENSION bloomfilter;
CREATE TABLE t_trig (k int);
INSERT INTO t_trig SELECT g FROM generate_series(1, 1000) g;
SELECT bf_track('t_trig', 'k', 1000000, 0.001, method => 'trigger');
CREATE TABLE t_idx (k int);
INSERT INTO t_idx SELECT g FROM generate_series(1, 1000) g;
SELECT bf_track('t_idx', 'k', 1000000, 0.001);
CREATE TABLE t_plain (k int);
INSERT INTO t_plain SELECT g FROM generate_series(1, 1000) g;
CREATE INDEX t_plain_bf ON t_plain USING bloomfilter (k) WITH (capacity = 1000000);
CREATE ROLE reader LOGIN;
CREATE ROLE resetter LOGIN;
GRANT EXECUTE ON FUNCTION bf_stat_reset() TO resetter;
});

is($node->safe_psql('postgres', 'SELECT bf_stat_available()'), 't', 'available when preloaded');

my $counts_query =
  "SELECT relname, coalesce(attname, '-'), kind, lookups, absent, skipped FROM bf_stat_filters ORDER BY 1";

# the query's result, once it is $expected (or the poll's time is out)
sub eventually
{
	my ($query, $expected) = @_;
	$node->poll_query_until('postgres', $query, $expected);
	return $node->safe_psql('postgres', $query);
}

sub counts
{
	my ($expected) = @_;
	return eventually($counts_query, $expected);
}

# one statement per key (a call site may read many keys at once otherwise)
for my $k (1, 2, 3, -1, -2)
{
	$node->safe_psql('postgres', "SELECT bf_might_contain('t_trig', 'k', $k)");
	$node->safe_psql('postgres', "SELECT bf_might_contain('t_idx', 'k', $k)");
}
$node->safe_psql('postgres',
	"SELECT bf_index_contains('t_plain_bf', 5), bf_index_contains('t_plain_bf', -5)");
$node->safe_psql('postgres',
	"SET enable_seqscan = off; SET enable_indexscan = off; SELECT * FROM t_plain WHERE k = -7");
my $expected = "t_idx|k|tracked|5|2|0\nt_plain_bf|-|index|3|2|0\nt_trig|k|tracked|5|2|0";
is(counts($expected), $expected, 'lookups and absent answers of each filter');

$node->safe_psql('postgres',
	"SET bloomfilter.track_stats = off; SELECT bf_might_contain('t_trig', 'k', -3)");
is($node->safe_psql('postgres', "SELECT lookups FROM bf_stat_filters WHERE relname = 't_trig'"),
	'5', 'nothing counted with bloomfilter.track_stats off');

# counts of one database are not another's
$node->safe_psql('postgres', 'CREATE DATABASE other');
$node->safe_psql('other', 'CREATE EXTENSION bloomfilter');
is($node->safe_psql('other', 'SELECT count(*) FROM bf_stat_filters'), '0',
	'another database shows none');

# a transaction's counts are added at its end, also when it rolls back
$node->safe_psql('postgres',
	"BEGIN; SELECT bf_might_contain('t_trig', 'k', 1); ROLLBACK;");
is(eventually("SELECT lookups FROM bf_stat_filters WHERE relname = 't_trig'", '6'),
	'6', 'a rolled-back transaction counted');

is($node->safe_psql('postgres', 'SELECT count(*) FROM bf_stat_filters', extra_params => [ '-U', 'reader' ]),
	'3', 'anyone reads them');
my ($ret, $out, $err) =
  $node->psql('postgres', 'SELECT bf_stat_reset()', extra_params => [ '-U', 'reader' ]);
like($err, qr/permission denied for function bf_stat_reset/, 'a plain role may not reset');
$node->safe_psql('postgres', 'SELECT bf_stat_reset()', extra_params => [ '-U', 'resetter' ]);
is($node->safe_psql('postgres', 'SELECT count(*) FROM bf_stat_filters'), '0',
	'reset by a role granted EXECUTE');
is($node->safe_psql('postgres', 'SELECT count(*) FROM bf_stat_filters_raw()'), '0',
	'nothing left of the reset counts');

# scan guards (docs/scan-guards.md): the filter's test counts the lookup,
# the guard the scan it skipped
$node->safe_psql(
	'postgres', q{
SET plan_cache_mode = force_generic_plan;
PREPARE g(int) AS SELECT * FROM t_plain WHERE k = $1;
EXECUTE g(-8);
EXECUTE g(8);
PREPARE gt(int) AS SELECT * FROM t_trig WHERE k = $1;
EXECUTE gt(-8);
});
$expected = "t_plain_bf|-|index|2|1|1\nt_trig|k|tracked|1|1|1";
is(counts($expected), $expected, 'a guarded scan skipped is counted');

# a clean restart keeps the counts (15 to 17: through a file of pg_stat/,
# removed once read back)
$node->safe_psql('postgres', "SELECT bf_might_contain('t_trig', 'k', 1)");
$expected = "t_plain_bf|-|index|2|1|1\nt_trig|k|tracked|2|1|1";
is(counts($expected), $expected, 'counted before the restart');
$node->restart;
is($node->safe_psql('postgres', $counts_query), $expected, 'a clean restart keeps the counts');
ok(!-e $node->data_dir . '/pg_stat/bloomfilter.stat', 'no file of counts left behind');
$node->safe_psql('postgres', "SELECT bf_might_contain('t_trig', 'k', 1)");
is( eventually("SELECT lookups FROM bf_stat_filters WHERE relname = 't_trig'", '3'),
	'3', 'counting goes on after the restart');
$node->restart;
is($node->safe_psql('postgres', "SELECT lookups FROM bf_stat_filters WHERE relname = 't_trig'"),
	'3', 'and a second restart keeps them');

# an immediate stop is a crash: the counts start from zero, as
# pg_stat_user_indexes' do
$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres', 'SELECT count(*) FROM bf_stat_filters_raw()'),
	'0', 'an immediate stop starts from zero');
$node->safe_psql('postgres', "SELECT bf_might_contain('t_trig', 'k', 1)");
is(eventually("SELECT lookups FROM bf_stat_filters WHERE relname = 't_trig'", '1'),
	'1', 'counting goes on after the crash');

# a process of the server killed: the postmaster restarts it after a
# crash (the test clusters' default is not to), and the counts start from
# zero again
$node->append_conf('postgresql.conf', "restart_after_crash = on\n");
$node->reload;
my $bgwriter = $node->safe_psql('postgres',
	"SELECT pid FROM pg_stat_activity WHERE backend_type = 'background writer'");
kill 'KILL', $bgwriter;
$node->poll_query_until('postgres',
	"SELECT pid <> $bgwriter FROM pg_stat_activity WHERE backend_type = 'background writer'");
is($node->safe_psql('postgres', 'SELECT count(*) FROM bf_stat_filters_raw()'),
	'0', 'a crash-restart starts from zero');
$node->safe_psql('postgres', "SELECT bf_might_contain('t_trig', 'k', 1)");
is(eventually("SELECT lookups FROM bf_stat_filters WHERE relname = 't_trig'", '1'),
	'1', 'counting goes on after the crash-restart');

# a dropped relation's counts go with it, when the drop commits, so that
# an object given its OID again starts from zero; a rolled-back drop
# keeps them, also one rolled back to a savepoint
$node->safe_psql(
	'postgres', q{
CREATE TABLE t_drop (a int, k int);
INSERT INTO t_drop SELECT g, g FROM generate_series(1, 100) g;
CREATE INDEX t_drop_bf ON t_drop USING bloomfilter (k);
SELECT bf_track('t_drop', 'k', 1000, 0.01, method => 'trigger');
});
my $idx = $node->safe_psql('postgres', "SELECT 't_drop_bf'::regclass::oid");
my $tbl = $node->safe_psql('postgres', "SELECT 't_drop'::regclass::oid");
$node->safe_psql('postgres',
	"SELECT bf_index_contains('t_drop_bf', 1), bf_might_contain('t_drop', 'k', -1)");
my $raw_query = "SELECT relid, attnum, lookups FROM bf_stat_filters_raw() "
  . "WHERE relid IN ($idx, $tbl) ORDER BY 1, 2";
my $before = eventually($raw_query, "$tbl|2|1\n$idx|0|1");
is($before, "$tbl|2|1\n$idx|0|1", 'the counts of a table and its index');
$node->safe_psql('postgres', 'BEGIN; DROP TABLE t_drop; ROLLBACK;');
is($node->safe_psql('postgres', $raw_query), $before, 'a rolled-back drop keeps them');
$node->safe_psql('postgres',
	'BEGIN; SAVEPOINT a; DROP TABLE t_drop; ROLLBACK TO a; COMMIT;');
is($node->safe_psql('postgres', $raw_query), $before,
	'a drop rolled back to a savepoint keeps them');
$node->safe_psql('postgres',
	'BEGIN; SAVEPOINT a; SAVEPOINT b; DROP TABLE t_drop; RELEASE b; ROLLBACK TO a; COMMIT;');
is($node->safe_psql('postgres', $raw_query), $before,
	'so does a drop in a released savepoint whose parent rolls back');
$node->safe_psql('postgres', 'DROP INDEX t_drop_bf');
is($node->safe_psql('postgres', $raw_query), "$tbl|2|1", "a dropped index's counts go");
$node->safe_psql('postgres', 'CREATE INDEX t_drop_bf ON t_drop USING bloomfilter (k)');
$node->safe_psql('postgres', "SELECT bf_index_contains('t_drop_bf', 1)");
is( eventually(
		"SELECT lookups FROM bf_stat_filters WHERE relname = 't_drop_bf'", '1'),
	'1', 'an index made again under the name starts from zero');
$node->safe_psql('postgres', "SELECT bf_untrack('t_drop', 'k'); DROP TABLE t_drop");
is($node->safe_psql('postgres', $raw_query), '', "a dropped table's counts go");
$node->restart;
is($node->safe_psql('postgres', $raw_query), '', 'and stay gone across a restart');
is($node->safe_psql('postgres', $counts_query), "t_trig|k|tracked|1|0|0",
	'the others are kept');
is($node->safe_psql('postgres', 'SELECT count(*) FROM bf_stat_filters', extra_params => [ '-U', 'reader' ]),
	'1', 'a role without rights reads them as before');

# 18 and later: pg_stat_reset() zeroes them; they are in PostgreSQL's
# statistics file, which a server without the library cannot read:
# PostgreSQL then starts all of its statistics from zero, as for any
# extension's kind (docs/monitoring.md)
if ($node->safe_psql('postgres', 'SHOW server_version_num') >= 180000)
{
	$node->safe_psql('postgres', 'SELECT pg_stat_reset()');
	is($node->safe_psql('postgres', 'SELECT count(*) FROM bf_stat_filters'), '0',
		"18 and later: pg_stat_reset() zeroes them with PostgreSQL's own");
	$node->safe_psql('postgres', "SELECT bf_might_contain('t_trig', 'k', 1)");
	$node->stop;
	$node->adjust_conf('postgresql.conf', 'shared_preload_libraries', "''");
	my $log_offset = -s $node->logfile;
	$node->start;
	ok( $node->log_contains(qr/could not find information of kind for entry/, $log_offset),
		'18 and later: a server without the library discards the statistics file');
	is($node->safe_psql('postgres', 'SELECT bf_stat_available()'), 'f',
		'and counts nothing');
}

$node->stop;
done_testing();
