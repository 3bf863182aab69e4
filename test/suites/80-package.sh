# the Debian package: built with pg_buildext, installed with dpkg -i in a
# clean Debian root, CREATE EXTENSION there; then built again with its
# checks, as root.  On this machine's release and server, then on 19 (the
# matrix's sid-19 root: 19 from Debian's experimental suite)
[ "${BF_NESTED:-0}" = 1 ] && exit 77
bash test/package_check.sh || exit 1
bash test/package_check.sh sid-19
