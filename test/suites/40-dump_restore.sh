# tracked filters across pg_dump -Fc / pg_restore
pg_virtualenv bash test/dump_restore.sh
