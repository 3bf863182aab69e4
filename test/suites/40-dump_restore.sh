# tracked filters across pg_dump -Fc / pg_restore (a TAP test)
. test/lib/tap.sh
bf_tap test/t/002_dump_restore.pl
