# bench/scenarios/56-probes.sh -- absent-key probe throughput, one key per
# statement, as an application asks: every way this extension offers
# against the btree and hash indexes it competes with, in the same run
#
# pgbench -M prepared, 1 and 2 clients, each statement one random absent
# text key; "pipelined" sends 10 statements per pipeline.  Rows (probes/s):
#   btree EXISTS, hash EXISTS, bf_index_contains, bf_might_contain (column
#   tracked with the index method), and a stored filter read per statement
#   (SELECT bf_contains((SELECT f FROM filters WHERE id = ...), $1)) of
#   1 KB and of 12 MB (capacity 10 M at 1 %).
# Sourced by run-inner.sh with lib.sh loaded (q, row, ratio).

PGBENCH="$(pg_config --bindir)/pgbench"
RN="${BENCH_PROBE_ROWS:-2000000}"
PSECS="${BENCH_PROBE_SECONDS:-5}"
work="$(mktemp -d /tmp/bf-bench56.XXXXXX)"
log "56-probes: $RN rows per table, ${PSECS}s per pgbench run"

for t in pr_bt pr_hash pr_bf; do
	q "DROP TABLE IF EXISTS $t; CREATE TABLE $t (id bigint, k text);
	INSERT INTO $t SELECT g, 'user' || g || '@example.com' FROM generate_series(1, $RN) g;"
done
q "CREATE INDEX ON pr_bt (k);
CREATE INDEX ON pr_hash USING hash (k);
SELECT bf_track('pr_bf', 'k', $((RN * 2)), 0.01, method => 'index');
VACUUM ANALYZE pr_bt; VACUUM ANALYZE pr_hash; VACUUM ANALYZE pr_bf;
DROP TABLE IF EXISTS pr_filters;
CREATE TABLE pr_filters (id int PRIMARY KEY, f bloomfilter);
INSERT INTO pr_filters SELECT 1, bf_add_all(bf_create(10000000, 0.01), array_agg('user' || g || '@example.com'))
	FROM generate_series(1, 100000) g;
INSERT INTO pr_filters SELECT 2, bf_add_all(bf_create(800, 0.01), array_agg('user' || g || '@example.com'))
	FROM generate_series(1, 100) g;
VACUUM ANALYZE pr_filters;" >/dev/null
bfidx="$(q "SELECT bf_track_index('pr_bf', 'k')")"
sizes="$(q "SELECT string_agg(id || ': ' || pg_size_pretty(pg_column_size(f)::bigint), ', ' ORDER BY id) FROM pr_filters")"

declare -A SQL=(
	[btree]="SELECT EXISTS (SELECT 1 FROM pr_bt WHERE k = \$1)"
	[hash]="SELECT EXISTS (SELECT 1 FROM pr_hash WHERE k = \$1)"
	[index_contains]="SELECT bf_index_contains('$bfidx'::regclass, \$1::text)"
	[might_contain]="SELECT bf_might_contain('pr_bf'::regclass, 'k', \$1::text)"
	[stored_12mb]="SELECT bf_contains((SELECT f FROM pr_filters WHERE id = 1), \$1::text)"
	[stored_1kb]="SELECT bf_contains((SELECT f FROM pr_filters WHERE id = 2), \$1::text)"
)
order="btree hash index_contains might_contain stored_12mb stored_1kb"
script() { # name pipelined -> file
	local f="$work/$1.$2.sql" stmt key="'absent' || :r || '@example.com'"
	stmt="${SQL[$1]//\$1/$key}"
	{
		if [ "$2" = 1 ]; then
			echo '\startpipeline'
			for _ in 1 2 3 4 5 6 7 8 9 10; do
				echo '\set r random(1, 1000000000)'
				echo "$stmt;"
			done
			echo '\endpipeline'
		else
			echo '\set r random(1, 1000000000)'
			echo "$stmt;"
		fi
	} >"$f"
	echo "$f"
}
declare -A R=()
for c in 1 2; do
	for p in 0 1; do
		for v in $order; do
			tps="$("$PGBENCH" -n -M prepared -f "$(script "$v" "$p")" -T "$PSECS" -c "$c" -j "$c" "$BENCH_DB" 2>/dev/null |
				awk '/^tps = / { printf "%.0f\n", $3 }')"
			R[$v.$c.$p]=$((tps * (p == 1 ? 10 : 1)))
			log "56-probes: $v, $c client(s), pipelined=$p: ${R[$v.$c.$p]} probes/s"
		done
	done
done
for c in 1 2; do
	for p in 0 1; do
		mode="$([ "$p" = 1 ] && echo "pipelined (10 per pipeline)" || echo "not pipelined")"
		line=""
		for v in $order; do line="$line $v ${R[$v.$c.$p]},"; done
		row "probes/s, $c client(s), $mode: bf_index_contains / btree EXISTS" \
			"$(ratio "${R[index_contains.$c.$p]}" "${R[btree.$c.$p]}")" "(info)" \
			"pgbench -M prepared, ${PSECS}s, random absent text keys, $(fmt_int "$RN") rows; probes/s:${line%,}"
		row "probes/s, $c client(s), $mode: stored 12 MB / 1 KB filter" \
			"$(ratio "${R[stored_12mb.$c.$p]}" "${R[stored_1kb.$c.$p]}")" "(value area: >= 0.8)" \
			"same runs; stored filter sizes $sizes"
	done
done
q "SELECT bf_untrack('pr_bf', 'k')" >/dev/null 2>&1 || true
q "DROP TABLE pr_bt, pr_hash, pr_bf, pr_filters"
rm -rf "$work"
