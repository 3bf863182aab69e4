# the Debian package: built with pg_buildext, installed with dpkg -i in a
# clean Debian root, CREATE EXTENSION there
[ "${BF_NESTED:-0}" = 1 ] && exit 77
bash test/package_check.sh
