# For users who run pg_cron: a job that rebuilds a tracked column's index
# online (REINDEX INDEX CONCURRENTLY, which pg_cron runs as a top-level
# command) brings a drifted filter back to its rate, with every key found.
# Skipped where pg_cron is not installed (Debian: postgresql-NN-cron).
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $sharedir = `pg_config --sharedir`;
chomp $sharedir;
plan skip_all => 'pg_cron is not installed (Debian: postgresql-NN-cron)'
  unless -f "$sharedir/extension/pg_cron.control";

my $node = PostgreSQL::Test::Cluster->new('main');
$node->init;
$node->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'pg_cron'
cron.database_name = 'postgres'
cron.use_background_workers = on
max_worker_processes = 16
});
$node->start;

$node->safe_psql(
	'postgres', q{
SET client_min_messages = warning;
CREATE EXTENSION pg_cron;
CREATE EXTENSION bloomfilter;
CREATE TABLE users (email text);
INSERT INTO users SELECT 'u' || g FROM generate_series(1, 10000) g;
SELECT bf_track('users', 'email', 10000, 0.01);
DELETE FROM users WHERE length(email) > 4;
INSERT INTO users SELECT 'v' || g FROM generate_series(1, 9001) g;
SELECT pg_stat_force_next_flush();
});
is($node->safe_psql('postgres', "SELECT rebuild_due FROM bf_tracked"), 't', 'drifted');
my $relfile = q{SELECT pg_relation_filenode(bf_track_index('users', 'email'))};
my $before = $node->safe_psql('postgres', $relfile);

# the job as README shows it (every minute here, pg_cron's shortest
# schedule before 1.5; nightly there)
$node->safe_psql('postgres',
	q{SELECT cron.schedule('bloomfilter-rebuild-users', '* * * * *', 'REINDEX INDEX CONCURRENTLY public.users_email_bf')}
);
ok( $node->poll_query_until(
		'postgres',
		"SELECT count(*) > 0 FROM cron.job_run_details WHERE status = 'succeeded'"),
	'the job ran');
isnt($node->safe_psql('postgres', $relfile), $before, 'the index was rebuilt');
$node->safe_psql('postgres', q{SELECT cron.unschedule('bloomfilter-rebuild-users')});
is( $node->safe_psql(
		'postgres', "SELECT estimated_fpr < 0.02 AND NOT rebuild_due FROM bf_tracked"),
	't',
	'the rate is back near the target');
is( $node->safe_psql(
		'postgres', "SELECT count(*) FROM users WHERE NOT bf_might_contain('users', 'email', email)"),
	'0',
	'every key found');

$node->stop;
done_testing();
