# Per-filter statistics (bloomfilter in shared_preload_libraries): every
# lookup path counts its filter's lookups and "absent" answers --
# bf_might_contain of both methods, bf_index_contains, the bitmap scan of
# a bloomfilter index, a scan guard and the scan it skipped -- in
# bf_stat_filters once the transaction ends;
# bloomfilter.track_stats = off counts nothing; another database's counts
# are not shown; everyone may read them, only superusers and those granted
# EXECUTE may reset them; a restart starts from zero (shared memory).
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

sub counts
{
	return $node->safe_psql('postgres',
		"SELECT relname, coalesce(attname, '-'), kind, lookups, absent, skipped FROM bf_stat_filters ORDER BY 1");
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
is( counts(),
	"t_idx|k|tracked|5|2|0\nt_plain_bf|-|index|3|2|0\nt_trig|k|tracked|5|2|0",
	'lookups and absent answers of each filter');

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
is($node->safe_psql('postgres', "SELECT lookups FROM bf_stat_filters WHERE relname = 't_trig'"),
	'6', 'a rolled-back transaction counted');

is($node->safe_psql('postgres', 'SELECT count(*) FROM bf_stat_filters', extra_params => [ '-U', 'reader' ]),
	'3', 'anyone reads them');
my ($ret, $out, $err) =
  $node->psql('postgres', 'SELECT bf_stat_reset()', extra_params => [ '-U', 'reader' ]);
like($err, qr/permission denied for function bf_stat_reset/, 'a plain role may not reset');
$node->safe_psql('postgres', 'SELECT bf_stat_reset()', extra_params => [ '-U', 'resetter' ]);
is($node->safe_psql('postgres', 'SELECT count(*) FROM bf_stat_filters'), '0',
	'reset by a role granted EXECUTE');

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
is(counts(), "t_plain_bf|-|index|2|1|1\nt_trig|k|tracked|1|1|1",
	'a guarded scan skipped is counted');

$node->safe_psql('postgres', "SELECT bf_might_contain('t_trig', 'k', 1)");
$node->restart;
is($node->safe_psql('postgres', 'SELECT count(*) FROM bf_stat_filters'), '0',
	'a restart starts from zero');

$node->stop;
done_testing();
