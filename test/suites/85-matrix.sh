# the version matrix (test/matrix.sh): the build and the suites that need no
# root of their own on PostgreSQL 17 (trixie), 18 (sid) and 19 (sid with
# Debian's experimental suite), each in a minimal Debian root
[ "${BF_NESTED:-0}" = 1 ] && exit 77
bash test/matrix.sh
