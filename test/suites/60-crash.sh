# the index access method: kill -9 mid-stream, recovery, streaming replica
bash test/crash_test.sh
