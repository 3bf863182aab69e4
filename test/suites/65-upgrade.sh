# the released 1.0 updated along the chain of update scripts: same answers,
# same catalog as a fresh install from the full install script (a TAP test;
# skipped without git history)
# the committed full install script is what the chain generates (make
# full-script); that it makes the chain's catalog is the TAP test's
full="$(mktemp /tmp/bf-full.XXXXXX.sql)"
make -s full-script FULL_SCRIPT_OUT="$full" || exit 1
script="$(sed -n 's/^FULL_SCRIPT = //p' Makefile)"
if ! cmp -s "$full" "$script"; then
	diff -u "$script" "$full" | head -40
	rm -f "$full"
	echo "upgrade: $script is not what the update chain generates: run make full-script"
	exit 1
fi
rm -f "$full"
echo "upgrade: $script is what the update chain generates"

. test/lib/tap.sh
bf_tap test/t/003_upgrade.pl
rc=$?
[ $rc -eq 0 ] || [ $rc -eq 77 ] || exit $rc

# Outside a clone that holds the releases (a tarball, a PGXN download, a
# shallow clone) the test must skip itself (exit 77) and say what it needs,
# never fail the test command: checked on a copy of this tree without .git
# and, in a clone, on a shallow clone of it (a second or two: the test
# decides before it builds anything)
skips_in() {
	local dir="$1" what="$2" out r
	chmod -R a+rX "$dir"
	out="$(cd "$dir" && bf_tap test/t/003_upgrade.pl 2>&1)"
	r=$?
	if [ $r -ne 77 ] || ! grep -q 'skipped: needs git and the released' <<<"$out"; then
		tail -20 <<<"$out"
		echo "upgrade: in $what the test did not skip itself saying what it needs (exit $r)"
		return 1
	fi
	echo "upgrade: in $what: $(grep -o 'skipped: .*' <<<"$out" | head -1)"
}
tmp="$(mktemp -d /tmp/bf-upgrade-skip.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
mkdir "$tmp/tarball"
tar --exclude=./.git --exclude='*.o' --exclude='*.bc' --exclude='*.so' --exclude=node_modules \
	-cf - . | tar -C "$tmp/tarball" -xf - || exit 1
skips_in "$tmp/tarball" "a copy without .git" || exit 1
if git rev-parse --git-dir >/dev/null 2>&1; then
	GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0='*' \
		git clone -q --depth 1 "file://$PWD" "$tmp/shallow" || exit 1
	skips_in "$tmp/shallow" "a shallow clone" || exit 1
fi
exit $rc
