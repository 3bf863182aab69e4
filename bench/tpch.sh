#!/usr/bin/env bash
# bench/tpch.sh -- join filters on TPC-H: the 22 queries with the filters
# off, on and auto (bloomfilter.join_filter and runtime_join_filter both),
# interleaved, their results compared, and the backend's CPU time per query
# (utime + stime of its /proc/<pid>/stat, not wall time: the machine is
# shared) with the rows the filters removed (bench/tpch.py).
#
#   TPCH_DIR=/path/to/tpch-dbgen bash bench/tpch.sh
#
# TPCH_DIR: a tpch-dbgen source tree (e.g. github.com/electrum/tpch-dbgen,
# or the dbgen/ folder of gregrahn/tpch-kit); no TPC code is in this
# repository, and without the tree the script says so and skips (77).  It
# runs in the libpq environment it is given (PGHOST, PGPORT, PGUSER: a
# server of this machine, where the extension is installed: the backend's
# /proc entry is read), in the database TPCH_DB (default tpch), made and
# loaded once (TPCH_RELOAD=1: again).  TPCH_SF: scale factor (1);
# TPCH_REPS: timed runs of each query and mode (2); TPCH_QUERIES (all:
# "1 2 ... 22"); TPCH_INDEXES=1: bloomfilter indexes on every join key
# (dropped again with 0, the default); TPCH_MODES ("off on auto").
# Settings of the server are the caller's (docs/PERFORMANCE.md gives the
# ones measured).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${TPCH_DIR:-}" ] || [ ! -f "${TPCH_DIR}/makefile.suite" ] || [ ! -f "${TPCH_DIR}/qgen.c" ]; then
	echo "skipped: set TPCH_DIR to a tpch-dbgen source tree (makefile.suite, qgen.c, queries/)"
	exit 77
fi
DB="${TPCH_DB:-tpch}"
SF="${TPCH_SF:-1}"
work="${TPCH_WORK:-/tmp/bf-tpch-$SF}"
mkdir -p "$work"

# dbgen and qgen, built in a copy of the tree
if [ ! -x "$work/src/dbgen" ] || [ ! -x "$work/src/qgen" ]; then
	rm -rf "$work/src"
	cp -r "$TPCH_DIR" "$work/src"
	make -s -C "$work/src" -f makefile.suite CC=gcc DATABASE=ORACLE MACHINE=LINUX WORKLOAD=TPCH \
		CFLAGS="-O2 -DDBNAME=\\\"dss\\\" -DLINUX -DORACLE -DTPCH -DRNG_TEST -D_FILE_OFFSET_BITS=64 -fcommon -w" \
		dbgen qgen >/dev/null
fi

p() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }
loaded=$(p -At -d postgres -c "SELECT count(*) FROM pg_database WHERE datname = '$DB'")
if [ "$loaded" = 0 ] || [ "${TPCH_RELOAD:-0}" = 1 ]; then
	echo "tpch: generating SF $SF in $work" >&2
	(cd "$work/src" && ./dbgen -q -f -s "$SF" -b dists.dss)
	p -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
	p -d "$DB" <<'EOF'
CREATE TABLE region (r_regionkey int NOT NULL, r_name char(25) NOT NULL, r_comment varchar(152));
CREATE TABLE nation (n_nationkey int NOT NULL, n_name char(25) NOT NULL, n_regionkey int NOT NULL,
	n_comment varchar(152));
CREATE TABLE part (p_partkey int NOT NULL, p_name varchar(55) NOT NULL, p_mfgr char(25) NOT NULL,
	p_brand char(10) NOT NULL, p_type varchar(25) NOT NULL, p_size int NOT NULL,
	p_container char(10) NOT NULL, p_retailprice numeric(15,2) NOT NULL, p_comment varchar(23) NOT NULL);
CREATE TABLE supplier (s_suppkey int NOT NULL, s_name char(25) NOT NULL, s_address varchar(40) NOT NULL,
	s_nationkey int NOT NULL, s_phone char(15) NOT NULL, s_acctbal numeric(15,2) NOT NULL,
	s_comment varchar(101) NOT NULL);
CREATE TABLE partsupp (ps_partkey int NOT NULL, ps_suppkey int NOT NULL, ps_availqty int NOT NULL,
	ps_supplycost numeric(15,2) NOT NULL, ps_comment varchar(199) NOT NULL);
CREATE TABLE customer (c_custkey int NOT NULL, c_name varchar(25) NOT NULL, c_address varchar(40) NOT NULL,
	c_nationkey int NOT NULL, c_phone char(15) NOT NULL, c_acctbal numeric(15,2) NOT NULL,
	c_mktsegment char(10) NOT NULL, c_comment varchar(117) NOT NULL);
CREATE TABLE orders (o_orderkey int NOT NULL, o_custkey int NOT NULL, o_orderstatus char(1) NOT NULL,
	o_totalprice numeric(15,2) NOT NULL, o_orderdate date NOT NULL, o_orderpriority char(15) NOT NULL,
	o_clerk char(15) NOT NULL, o_shippriority int NOT NULL, o_comment varchar(79) NOT NULL);
CREATE TABLE lineitem (l_orderkey int NOT NULL, l_partkey int NOT NULL, l_suppkey int NOT NULL,
	l_linenumber int NOT NULL, l_quantity numeric(15,2) NOT NULL, l_extendedprice numeric(15,2) NOT NULL,
	l_discount numeric(15,2) NOT NULL, l_tax numeric(15,2) NOT NULL, l_returnflag char(1) NOT NULL,
	l_linestatus char(1) NOT NULL, l_shipdate date NOT NULL, l_commitdate date NOT NULL,
	l_receiptdate date NOT NULL, l_shipinstruct char(25) NOT NULL, l_shipmode char(10) NOT NULL,
	l_comment varchar(44) NOT NULL);
EOF
	for t in region nation part supplier partsupp customer orders lineitem; do
		sed 's/|$//' "$work/src/$t.tbl" | p -d "$DB" -c "COPY $t FROM STDIN WITH (DELIMITER '|')"
		rm -f "$work/src/$t.tbl"
	done
	p -d "$DB" <<'EOF'
ALTER TABLE region ADD PRIMARY KEY (r_regionkey);
ALTER TABLE nation ADD PRIMARY KEY (n_nationkey);
ALTER TABLE part ADD PRIMARY KEY (p_partkey);
ALTER TABLE supplier ADD PRIMARY KEY (s_suppkey);
ALTER TABLE partsupp ADD PRIMARY KEY (ps_partkey, ps_suppkey);
ALTER TABLE customer ADD PRIMARY KEY (c_custkey);
ALTER TABLE orders ADD PRIMARY KEY (o_orderkey);
ALTER TABLE lineitem ADD PRIMARY KEY (l_orderkey, l_linenumber);
ALTER TABLE nation ADD FOREIGN KEY (n_regionkey) REFERENCES region;
ALTER TABLE supplier ADD FOREIGN KEY (s_nationkey) REFERENCES nation;
ALTER TABLE customer ADD FOREIGN KEY (c_nationkey) REFERENCES nation;
ALTER TABLE partsupp ADD FOREIGN KEY (ps_partkey) REFERENCES part;
ALTER TABLE partsupp ADD FOREIGN KEY (ps_suppkey) REFERENCES supplier;
ALTER TABLE orders ADD FOREIGN KEY (o_custkey) REFERENCES customer;
ALTER TABLE lineitem ADD FOREIGN KEY (l_orderkey) REFERENCES orders;
ALTER TABLE lineitem ADD FOREIGN KEY (l_partkey, l_suppkey) REFERENCES partsupp;
CREATE INDEX ON lineitem (l_partkey);
CREATE INDEX ON lineitem (l_suppkey);
CREATE INDEX ON orders (o_custkey);
CREATE INDEX ON partsupp (ps_suppkey);
CREATE EXTENSION IF NOT EXISTS bloomfilter;
VACUUM ANALYZE;
EOF
fi

# bloomfilter indexes on every join key
idx="o_orderkey:orders o_custkey:orders c_custkey:customer c_nationkey:customer p_partkey:part
	s_suppkey:supplier s_nationkey:supplier n_nationkey:nation n_regionkey:nation r_regionkey:region
	ps_partkey:partsupp ps_suppkey:partsupp l_orderkey:lineitem l_partkey:lineitem l_suppkey:lineitem"
for ic in $idx; do
	col="${ic%%:*}" tbl="${ic##*:}"
	if [ "${TPCH_INDEXES:-0}" = 1 ]; then
		p -d "$DB" -c "CREATE INDEX IF NOT EXISTS bf_$col ON $tbl USING bloomfilter ($col)"
	else
		p -d "$DB" -c "DROP INDEX IF EXISTS bf_$col"
	fi
done
p -d "$DB" -c "ANALYZE"

mkdir -p "$work/queries"
for n in ${TPCH_QUERIES:-$(seq 1 22)}; do
	(cd "$work/src" && DSS_QUERY=queries ./qgen -d "$n") >"$work/queries/$n.sql"
done
/usr/bin/python3 bench/tpch.py --db "$DB" --queries "$work/queries" \
	--reps "${TPCH_REPS:-2}" --modes "${TPCH_MODES:-off on auto}" ${TPCH_QUERIES:+--only "$TPCH_QUERIES"}
