# The opt-in rebuild worker (bloomfilter in shared_preload_libraries,
# bloomfilter.auto_rebuild = on): an index-tracked column whose filter has
# drifted (keys deleted and replaced) is rebuilt online by REINDEX INDEX
# CONCURRENTLY, one tracked by the trigger method by bf_rebuild(...,
# concurrently => true), and one that is not due is left alone; growing
# filters of both methods that grew 4 layers or more are compacted into
# one.  Every key is found
# before and after.  With auto_rebuild off the worker does nothing.  A
# crash in the middle of an online rebuild leaves a filter that answers,
# and the worker drops the invalid index the rebuild left behind.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use FindBin;
use lib $FindBin::RealBin;
use BfServer;

my $node = PostgreSQL::Test::Cluster->new('main');
$node->init;
$node->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'bloomfilter'
bloomfilter.auto_rebuild = off
bloomfilter.auto_rebuild_naptime = 1
});
$node->start;

is( $node->safe_psql(
		'postgres',
		"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'bloomfilter rebuild worker'"),
	'1',
	'the worker runs');

$node->safe_psql(
	'postgres', q{
SET client_min_messages = warning;
CREATE EXTENSION bloomfilter;
CREATE TABLE drifted (k int);
INSERT INTO drifted SELECT g FROM generate_series(1, 10000) g;
SELECT bf_track('drifted', 'k', 10000, 0.01);
CREATE TABLE steady (k int);
INSERT INTO steady SELECT g FROM generate_series(1, 10000) g;
SELECT bf_track('steady', 'k', 10000, 0.01);
CREATE TABLE by_trigger (k int);
INSERT INTO by_trigger SELECT g FROM generate_series(1, 10000) g;
SELECT bf_track('by_trigger', 'k', 10000, 0.01, method => 'trigger');
DELETE FROM drifted WHERE k > 1000;
INSERT INTO drifted SELECT g FROM generate_series(100001, 109000) g;
DELETE FROM by_trigger WHERE k > 1000;
INSERT INTO by_trigger SELECT g FROM generate_series(100001, 109000) g;
CREATE TABLE grown (k int);
CREATE INDEX grown_k ON grown USING bloomfilter (k) WITH (capacity = 1000, growth = 2);
INSERT INTO grown SELECT g FROM generate_series(1, 30000) g;
SELECT bf_track('grown', 'k');
CREATE TABLE grown_t (k int);
SELECT bf_track('grown_t', 'k', method => 'trigger');
INSERT INTO grown_t SELECT g FROM generate_series(1, 30000) g;
SELECT pg_stat_force_next_flush();
});

my $due = q{SELECT string_agg(tbl::text, ',' ORDER BY tbl::text) FROM bf_tracked WHERE rebuild_due};
is($node->safe_psql('postgres', $due), 'by_trigger,drifted,grown,grown_t',
	'two filters drifted, a growing index and a growing trigger filter grew many layers');
my $relfile = q{SELECT pg_relation_filenode(bf_track_index('drifted', 'k'))};
my $before = $node->safe_psql('postgres', $relfile);
sleep 3;
is($node->safe_psql('postgres', $relfile), $before, 'auto_rebuild off: nothing rebuilt');

$node->append_conf('postgresql.conf', 'bloomfilter.auto_rebuild = on');
$node->reload;
my $rebuilt = $node->poll_query_until('postgres',
	"SELECT NOT rebuild_due FROM bf_tracked WHERE tbl = 'drifted'::regclass");
ok($rebuilt, 'auto_rebuild on: the drifted filter is rebuilt');
isnt($node->safe_psql('postgres', $relfile), $before, 'by a new index');
is( $node->safe_psql(
		'postgres',
		"SELECT estimated_fpr < 0.02 FROM bf_tracked WHERE tbl = 'drifted'::regclass"),
	't',
	'its rate is back near the target');
is( $node->safe_psql(
		'postgres',
		"SELECT count(*) FROM drifted WHERE NOT bf_might_contain('drifted', 'k', k)"),
	'0',
	'every key of the rebuilt filter found');
is( $node->safe_psql(
		'postgres',
		"SELECT count(*) FROM pg_index WHERE indrelid = 'drifted'::regclass AND indisvalid"),
	'1',
	'one valid index left');
ok( $node->poll_query_until(
		'postgres',
		"SELECT NOT rebuild_due FROM bf_tracked WHERE tbl = 'by_trigger'::regclass"),
	'a filter tracked by the trigger method is rebuilt too');
is( $node->safe_psql(
		'postgres',
		"SELECT (SELECT estimated_fpr < 0.02 FROM bf_tracked WHERE tbl = 'by_trigger'::regclass) "
		  . "AND (SELECT count(*) = 0 FROM by_trigger WHERE NOT bf_might_contain('by_trigger', 'k', k))"),
	't',
	'concurrently, back near its rate, every key found');
ok( $node->log_contains(qr/bloomfilter: rebuilding the filter of by_trigger\.k online/),
	'the worker says so');
ok( $node->poll_query_until(
		'postgres', "SELECT bf_index_layer_count('grown_k') = 1"),
	'the grown index is compacted into one layer');
is( $node->safe_psql(
		'postgres',
		"SELECT count(*) FROM grown WHERE NOT bf_might_contain('grown', 'k', k)"),
	'0',
	'every key of the compacted index found');
ok( $node->poll_query_until(
		'postgres', "SELECT count(*) = 1 FROM bf_layers(bf_tracked_filter('grown_t', 'k'))"),
	'the grown trigger filter is compacted into one layer, online');
is( $node->safe_psql(
		'postgres',
		"SELECT count(*) FROM grown_t WHERE NOT bf_might_contain('grown_t', 'k', k)"),
	'0',
	'every key of the compacted trigger filter found');
is($node->safe_psql('postgres', $due), '', 'nothing left due');
ok( $node->log_contains(qr/bloomfilter: rebuilding index public\.drifted_k_bf online/),
	'the worker says what it rebuilt');
ok(!$node->log_contains(qr/rebuilding index public\.steady/), 'a filter not due is left alone');

# a crash in the middle of an online rebuild: it waits for a writer (its
# new index made, invalid), the server is killed; after recovery the
# filter still answers, and the worker drops the invalid leftover
my @psql = ('psql', '-X', '-q', '-At', '-d', $node->connstr('postgres'));
my $tmp = PostgreSQL::Test::Utils::tempdir;
my $writer = IPC::Run::start([ @psql, '-c', 'BEGIN', '-c', 'INSERT INTO drifted VALUES (-1)',
		'-c', 'SELECT pg_sleep(600)' ],
	'>', "$tmp/writer.out", '2>', "$tmp/writer.err");
$node->poll_query_until('postgres',
	"SELECT count(*) > 0 FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(600)'");
my $rebuild = IPC::Run::start([ @psql, '-c', 'REINDEX INDEX CONCURRENTLY drifted_k_bf' ],
	'>', "$tmp/rebuild.out", '2>', "$tmp/rebuild.err");
ok( $node->poll_query_until(
		'postgres',
		"SELECT count(*) > 0 FROM pg_class WHERE relname LIKE 'drifted_k_bf_ccnew%'"),
	'an online rebuild under way');
crash_server($node, $writer, $rebuild);
$node->start;
is( $node->safe_psql(
		'postgres',
		"SELECT count(*) FROM drifted WHERE NOT bf_might_contain('drifted', 'k', k)"),
	'0',
	'after the crash: every key found');
ok( $node->poll_query_until(
		'postgres',
		"SELECT count(*) = 1 FROM pg_index WHERE indrelid = 'drifted'::regclass"),
	'the invalid leftover is dropped');
ok( $node->log_contains(qr/bloomfilter: dropping index public\.drifted_k_bf_ccnew/),
	'the worker says so');
is($node->safe_psql('postgres', "SELECT count(*) FROM bf_tracked WHERE tbl = 'drifted'::regclass"),
	'1', 'still tracked');

$node->stop;
done_testing();
