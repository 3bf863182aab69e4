# the README's two commands on a fresh Debian bookworm root (debootstrap
# minbase, LANG unset)
[ "${BF_NESTED:-0}" = 1 ] && exit 77
bash test/fresh_machine.sh bookworm
