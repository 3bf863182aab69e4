// go-lookup: the Go client's bench rows (run by bench/clients/go.sh in a
// pg_virtualenv cluster).  A filter of 10 M bigint keys at 1 % made by the
// server (about 12 MB) is read through pgx; then, in the same run:
// the local check of absent 8-byte keys (CPU time), and the server round trip of
// bf_might_contain on the same machine.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math/rand"
	"os"
	"syscall"
	"time"

	bloomfilter "github.com/bloomfilter-pg/bloomfilter/clients/go"
	"github.com/jackc/pgx/v4"
)

func main() {
	keys := flag.Int("keys", 10_000_000, "keys in the filter")
	lookups := flag.Int("lookups", 1_000_000, "local lookups to time, per run")
	trips := flag.Int("trips", 5000, "server round trips to time")
	reps := flag.Int("reps", 30, "runs (the best is reported; short runs are the likelier to go uninterrupted on a shared machine)")
	flag.Parse()
	os.Unsetenv("PGSYSCONFDIR")
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, "")
	if err != nil {
		log.Fatal(err)
	}
	for _, q := range []string{
		`CREATE EXTENSION IF NOT EXISTS bloomfilter`,
		`DROP TABLE IF EXISTS bench_go_filter`,
		fmt.Sprintf(`CREATE TABLE bench_go_filter AS SELECT bf_agg(g * 2, %d, 0.01) AS f
			FROM generate_series(1, %d) g`, *keys, *keys),
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			log.Fatalf("%s: %v", q, err)
		}
	}
	var raw []byte
	t0 := time.Now()
	if err := conn.QueryRow(ctx, `SELECT f::bytea FROM bench_go_filter`).Scan(&raw); err != nil {
		log.Fatal(err)
	}
	fetch := time.Since(t0)
	f, err := bloomfilter.Parse(raw)
	if err != nil {
		log.Fatal(err)
	}

	// absent keys: odd numbers (the filter holds even ones)
	r := rand.New(rand.NewSource(1))
	probe := make([]int64, 1<<20)
	for i := range probe {
		probe[i] = 2*r.Int63n(1<<40) + 1
	}
	// local lookups are pure computation: timed by the process's CPU time
	// (on a shared machine the wall clock also counts waiting for a CPU),
	// and by the wall clock for comparison
	cpuNow := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			log.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	local := func(contains func(int64) bool) (time.Duration, time.Duration, float64) {
		best, bestWall := time.Duration(1<<62), time.Duration(1<<62)
		hits := 0
		for rep := 0; rep < *reps; rep++ {
			hits = 0
			c, t := cpuNow(), time.Now()
			for i := 0; i < *lookups; i++ {
				if contains(probe[i&(len(probe)-1)]) {
					hits++
				}
			}
			if d := (cpuNow() - c) / time.Duration(*lookups); d < best {
				best = d
			}
			if d := time.Since(t) / time.Duration(*lookups); d < bestWall {
				bestWall = d
			}
		}
		return best, bestWall, float64(hits) / float64(*lookups)
	}
	typed, typedWall, fpRate := local(func(k int64) bool { ok, _ := f.ContainsInt64(k); return ok })
	boxed, _, _ := local(func(k int64) bool { ok, _ := f.Contains(k); return ok })

	// server round trips, prepared, one key each
	trip := func(sql string) time.Duration {
		best := time.Duration(1 << 62)
		for rep := 0; rep < *reps; rep++ {
			t := time.Now()
			for i := 0; i < *trips; i++ {
				var ok bool
				if err := conn.QueryRow(ctx, sql, probe[i]).Scan(&ok); err != nil {
					log.Fatal(err)
				}
			}
			if d := time.Since(t) / time.Duration(*trips); d < best {
				best = d
			}
		}
		return best
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE bench_go_keys AS SELECT g * 2 AS id FROM generate_series(1, 100000) g`); err != nil {
		log.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `SELECT bf_track('bench_go_keys', 'id')`); err != nil {
		log.Fatal(err)
	}
	tracked := trip(`SELECT bf_might_contain('bench_go_keys'::regclass, 'id', $1::int8)`)
	conn.Exec(ctx, `DROP TABLE bench_go_filter, bench_go_keys`)

	fmt.Printf("| Go: local check, absent 8-byte key, %.1f MB filter (%d keys at 1 %%) | %d ns | ≤ 150 ns | ContainsInt64, CPU time, best of %d runs of %d lookups (wall clock %d ns); measured false-positive rate %.4f |\n",
		float64(len(raw))/1e6, *keys, typed.Nanoseconds(), *reps, *lookups, typedWall.Nanoseconds(), fpRate)
	fmt.Printf("| Go: same through Contains(any) | %d ns | | boxed int64 |\n", boxed.Nanoseconds())
	fmt.Printf("| Go: server round trip, bf_might_contain (tracked column), pgx | %.1f µs | | %.0f× the local check |\n",
		float64(tracked.Nanoseconds())/1e3, float64(tracked)/float64(typed))
	fmt.Printf("| Go: full fetch of the filter (bytea) + Parse | %d ms | | %d bytes |\n",
		fetch.Milliseconds(), len(raw))
}
