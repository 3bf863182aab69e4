# Tracked filters survive pg_dump -Fc / pg_restore.
#
# Builds a database with tracked columns (a plain table with a dropped
# column, so that attribute numbers differ after the restore; a renamed
# tracked column; a partitioned table), dumps it, restores it into a new
# database and checks that: the restore runs without error; the registry
# rows, filters and triggers came back; every value reports present; new
# writes (through the parent and directly into a partition) still sync; a
# RENAME COLUMN after the restore is still followed.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $src = 'bf_dump_src';
my $dst = 'bf_dump_dst';
my $dump = PostgreSQL::Test::Utils::tempdir . '/db.dump';

my $node = PostgreSQL::Test::Cluster->new('main');
$node->init;
$node->start;

$node->safe_psql('postgres', "CREATE DATABASE $src");
$node->safe_psql(
	$src, q{
SET client_min_messages = warning;
CREATE EXTENSION bloomfilter;
CREATE SCHEMA app;
CREATE TABLE app.t (pad int, id bigint, name text);
ALTER TABLE app.t DROP COLUMN pad;
INSERT INTO app.t SELECT g, 'n' || g FROM generate_series(1, 5000) g;
SELECT bf_track('app.t', 'id', method => 'trigger');
SELECT bf_track('app.t', 'name', 20000, 0.001, method => 'trigger');
ALTER TABLE app.t RENAME COLUMN name TO label;
ALTER TABLE app.t ADD PRIMARY KEY (id);
INSERT INTO app.t VALUES (6000, 'after');
DELETE FROM app.t WHERE id <= 10;
CREATE TABLE p (k int, v text) PARTITION BY RANGE (k);
CREATE TABLE p1 PARTITION OF p FOR VALUES FROM (0) TO (1000);
CREATE TABLE p2 PARTITION OF p FOR VALUES FROM (1000) TO (2000);
INSERT INTO p SELECT g FROM generate_series(1, 1999, 7) g;
SELECT bf_track('p', 'k', method => 'trigger');
});

my $registry_sql = q{
SELECT string_agg(format('%s.%s %s %s %s %s %s', tbl, col, method, capacity, fpr,
                         deleted_since_rebuild, md5(filter::bytea)), ', ' ORDER BY tbl::text, col)
FROM bf_registry};
my $triggers_sql = q{
SELECT string_agg(format('%s:%s', tgrelid::regclass, tgname), ' '
                  ORDER BY tgrelid::regclass::text, tgname)
FROM pg_trigger WHERE tgname LIKE 'bf\_sync\_%'};
my $before_registry = $node->safe_psql($src, $registry_sql);
my $before_triggers = $node->safe_psql($src, $triggers_sql);
isnt($before_registry, '', 'registry rows before the dump');
isnt($before_triggers, '', 'sync triggers before the dump');

$node->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $src ],
	'pg_dump -Fc of a database with tracked filters');
$node->safe_psql('postgres', "CREATE DATABASE $dst");
$node->command_ok([ 'pg_restore', '--exit-on-error', '-d', $dst, $dump ],
	'pg_restore without errors');

# check(name, sql, expected): the answer of sql in the restored database
sub check
{
	my ($name, $sql, $expected) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	is($node->safe_psql($dst, $sql), $expected, $name);
	return;
}

check('registry rows and filters restored', $registry_sql, $before_registry);
check('triggers restored, no duplicates', $triggers_sql, $before_triggers);
check(
	'bf_tracked after restore',
	"SELECT string_agg(tbl || '.' || col, ' ' ORDER BY tbl::text, col) FROM bf_tracked",
	'app.t.id app.t.label p.k');
check('no false negatives (id)',
	"SELECT count(*) FROM app.t WHERE NOT bf_might_contain('app.t', 'id', id)", 0);
check('no false negatives (renamed label)',
	"SELECT count(*) FROM app.t WHERE NOT bf_might_contain('app.t', 'label', label)",
	0);
check('no false negatives (partitioned)',
	"SELECT count(*) FROM p WHERE NOT bf_might_contain('p', 'k', k)", 0);
check('absent value', "SELECT bf_might_contain('app.t', 'id', 123456789)", 'f');

$node->safe_psql($dst, "INSERT INTO app.t VALUES (7000, 'new')");
$node->safe_psql($dst, 'INSERT INTO p VALUES (1500)');
$node->safe_psql($dst, 'INSERT INTO p1 VALUES (999)');
check(
	'new rows sync after restore (through the parent and into a partition)', q{
SELECT bf_might_contain('app.t', 'id', 7000) AND bf_might_contain('app.t', 'label', 'new')
   AND bf_might_contain('p', 'k', 1500) AND bf_might_contain('p', 'k', 999)}, 't');

# attribute numbers differ here (no dropped column): renames must still follow
$node->safe_psql($dst, 'ALTER TABLE app.t RENAME COLUMN label TO label2');
check(
	'rename after restore followed',
	"SELECT string_agg(col, ' ' ORDER BY col) FROM bf_tracked WHERE tbl = 'app.t'::regclass",
	'id label2');
$node->safe_psql($dst, "INSERT INTO app.t VALUES (7001, 'newer')");
check('sync after rename',
	"SELECT bf_might_contain('app.t', 'label2', 'newer')", 't');
check(
	'partitions keep one trigger set each', q{
SELECT count(*) FROM pg_trigger
WHERE tgname LIKE 'bf\_sync\_%' AND tgrelid IN ('p'::regclass, 'p1'::regclass, 'p2'::regclass)},
	12);

done_testing();
