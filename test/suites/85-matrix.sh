# the unit, layout, pg_regress, isolation and crash suites on PostgreSQL 17 (trixie)
# and 18 (sid), each in a minimal Debian root
[ "${BF_NESTED:-0}" = 1 ] && exit 77
bash test/matrix.sh
