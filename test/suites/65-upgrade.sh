# the released 1.0 updated along the chain of update scripts: same answers,
# same catalog as a fresh install
pg_virtualenv bash test/upgrade_check.sh
