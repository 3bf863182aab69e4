# the independent reader of docs/FORMAT.md against the extension
pg_virtualenv /usr/bin/python3 test/reference_check.py
