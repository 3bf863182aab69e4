# bloomfilter values across pg_dump / pg_restore
pg_virtualenv bash test/pg_dump_check.sh
