# the index access method: kill -9 mid-stream, recovery, streaming replica
# (a TAP test; BF_CRASH_SECONDS: how long the clients run before the crash)
. test/lib/tap.sh
bf_tap test/t/001_crash_replica.pl
