# pg_regress and isolation suites in a throwaway cluster (the TAP tests,
# which installcheck would run next, have suites of their own: TAP_TESTS=)
pg_virtualenv make -s installcheck TAP_TESTS=
rc=$?
[ $rc -ne 0 ] && head -300 regression.diffs output_iso/regression.diffs 2>/dev/null
exit $rc
