# the released 1.0 updated along the chain of update scripts: same answers,
# same catalog as a fresh install (a TAP test; skipped without git history)
. test/lib/tap.sh
bf_tap test/t/003_upgrade.pl
