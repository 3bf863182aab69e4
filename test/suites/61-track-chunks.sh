# the trigger method's chunked filters: 8 colliding writers (no deadlock,
# no lost bit), then kill -9 mid-stream, recovery, streaming replica (a TAP
# test; BF_CRASH_SECONDS: how long the clients run before the crash)
. test/lib/tap.sh
bf_tap test/t/006_track_chunks.pl
