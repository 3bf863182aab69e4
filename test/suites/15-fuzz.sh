# Fuzzers of the PostgreSQL-free parsers (test/fuzz/): each harness runs
# for a bounded time from the committed seed corpus, and any crash,
# sanitizer report or broken invariant fails the suite.  libFuzzer when
# clang has its fuzzer runtime, else the same harnesses under replay.c.
# BF_FUZZ_SECONDS is the fuzzing time of the whole suite (default 15;
# 50 with BF_LONG=1, the longer run of CI and run-all.sh --all).
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
total="${BF_FUZZ_SECONDS:-$([ "${BF_LONG:-0}" = 1 ] && echo 50 || echo 15)}"
harnesses="header text base64 names grow"
per=$((total / 5))
[ "$per" -ge 1 ] || per=1
work="$(mktemp -d)"
trap 'rm -rf "$work"; make -s clean' EXIT

probe="$work/probe.c"
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return d && n; }' >"$probe"
if command -v "${CLANG:-clang}" >/dev/null &&
	"${CLANG:-clang}" -fsanitize=fuzzer,address,undefined -o "$work/probe" "$probe" 2>/dev/null; then
	kind=libfuzzer
	make -s all
else
	kind=replay
	echo "fuzz: no clang fuzzer runtime, replaying the corpus with random mutations"
	make -s replay
fi

failed=0
for h in $harnesses; do
	mkdir -p "$work/new-$h" "$work/artifacts-$h"
	if [ $kind = libfuzzer ]; then
		# new inputs go to the first directory, never into the committed corpus
		cmd=(./fuzz_$h -max_total_time=$per -timeout=10 -rss_limit_mb=1024
			-artifact_prefix="$work/artifacts-$h/" "$work/new-$h" "corpus/$h")
	else
		cmd=(./fuzz_$h.replay -max_total_time=$per "corpus/$h")
	fi
	if "${cmd[@]}" >"$work/$h.log" 2>&1; then
		echo "fuzz $h ($kind, ${per} s): $(grep -E '^Done' "$work/$h.log" | tail -1)"
	else
		failed=1
		echo "fuzz $h ($kind): FINDING"
		grep -E 'ERROR|SUMMARY|fuzz invariant|runtime error|Test unit written' "$work/$h.log" | head -20
		for a in "$work/artifacts-$h"/*; do
			[ -f "$a" ] && { echo "input ($a):"; od -c "$a" | head -20; }
		done
	fi
done
exit $failed
