# online rebuilds by the opt-in worker and by a pg_cron job (TAP tests:
# preloaded libraries; the pg_cron one skips without pg_cron)
. test/lib/tap.sh
bf_tap test/t/004_auto_rebuild.pl test/t/005_pg_cron.pl
