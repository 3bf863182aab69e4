# sliding-window filters: the property test against exact models, and
# bloomwindow values across pg_dump / pg_restore
pg_virtualenv bash -c '/usr/bin/python3 test/window_property.py && bash test/window_dump_check.sh'
