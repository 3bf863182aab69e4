# malformed values through every input path, then every function on what
# is accepted: no internal error, no crash, every accepted value round-trips
# (BF_MALFORMED_N mutants, default 20 000)
pg_virtualenv /usr/bin/python3 test/malformed.py "${BF_MALFORMED_N:-20000}"
