# pg_regress and isolation suites in a throwaway cluster
pg_virtualenv make -s installcheck
rc=$?
[ $rc -ne 0 ] && head -300 regression.diffs output_iso/regression.diffs 2>/dev/null
exit $rc
