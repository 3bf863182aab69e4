// go-cache-guard: a cache-penetration guard in Go.  Requests for keys
// that do not exist (misses a cache cannot absorb, a common abuse) are
// turned away by a local copy of the table's Bloom filter, kept current by
// a Refresher, before they cost a database query.  Prints how many
// queries were avoided and what a turned-away request costs.
//
//	go-cache-guard -keys 10000000 -requests 1000000 -miss 0.9
//
// Connects with the PG* environment variables (pgx).  Creates the table
// guard_items with -keys rows and tracks it unless it already has them.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log"
	"math/rand"
	"os"
	"sort"
	"time"

	bloomfilter "github.com/bloomfilter-pg/bloomfilter/clients/go"
	_ "github.com/jackc/pgx/v4/stdlib"
)

func main() {
	keys := flag.Int64("keys", 10_000_000, "rows in the table (ids 1..keys)")
	requests := flag.Int("requests", 1_000_000, "requests to simulate")
	miss := flag.Float64("miss", 0.9, "fraction of requests for ids that do not exist")
	flag.Parse()
	os.Unsetenv("PGSYSCONFDIR") // set by pg_virtualenv; no driver here needs it
	ctx := context.Background()
	db, err := sql.Open("pgx", "")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if err := setup(ctx, db, *keys); err != nil {
		log.Fatal(err)
	}

	// the guard: a local copy of the filter of guard_items.id, refreshed
	// every second in the background
	guard := bloomfilter.NewRefresher(bloomfilter.NewTrackedSource(db, "guard_items", "id"),
		bloomfilter.RefresherOptions{Interval: time.Second})
	t0 := time.Now()
	if err := guard.Refresh(ctx); err != nil {
		log.Fatal(err)
	}
	info := guard.Filter().Info()
	fmt.Printf("filter: %d keys, %.1f MB, loaded in %v\n", *keys, float64(info.Bytes)/1e6,
		time.Since(t0).Round(time.Millisecond))
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	go guard.Run(rctx)

	lookup, err := db.PrepareContext(ctx, `SELECT true FROM guard_items WHERE id = $1`)
	if err != nil {
		log.Fatal(err)
	}
	r := rand.New(rand.NewSource(1))
	var queries, avoided, falsePositives int
	var turnedAway, queried []time.Duration
	for i := 0; i < *requests; i++ {
		id := 1 + r.Int63n(*keys)
		if r.Float64() < *miss {
			id = *keys + 1 + r.Int63n(1<<40) // an id that does not exist
		}
		start := time.Now()
		maybe, err := guard.Contains(id)
		if err != nil {
			log.Fatal(err)
		}
		if !maybe {
			turnedAway = append(turnedAway, time.Since(start))
			avoided++
			continue
		}
		var found bool
		err = lookup.QueryRowContext(ctx, id).Scan(&found)
		if err == sql.ErrNoRows {
			falsePositives++
		} else if err != nil {
			log.Fatal(err)
		}
		queried = append(queried, time.Since(start))
		queries++
	}
	fmt.Printf("requests: %d (%.0f%% for ids that do not exist)\n", *requests, 100**miss)
	fmt.Printf("database queries: %d made, %d avoided (%.1f%% of all requests); %d false positives\n",
		queries, avoided, 100*float64(avoided)/float64(*requests), falsePositives)
	fmt.Printf("turned-away request: median %v, p99 %v\n", pct(turnedAway, 50), pct(turnedAway, 99))
	fmt.Printf("request that queried: median %v, p99 %v\n", pct(queried, 50), pct(queried, 99))
	st := guard.Status()
	fmt.Printf("guard: copy %v old, %d refreshes, last error %v\n",
		st.Age.Round(time.Millisecond), st.Stats.Refreshes, st.LastError)
}

func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[(len(d)-1)*p/100]
}

// setup creates guard_items(id 1..keys) and tracks id, unless the table
// already has that many rows.
func setup(ctx context.Context, db *sql.DB, keys int64) error {
	var n int64
	err := db.QueryRowContext(ctx, `SELECT count(*) FROM guard_items`).Scan(&n)
	if err == nil && n == keys {
		return nil
	}
	t0 := time.Now()
	for _, q := range []string{
		`CREATE EXTENSION IF NOT EXISTS bloomfilter`,
		`DROP TABLE IF EXISTS guard_items`,
		`CREATE TABLE guard_items (id bigint PRIMARY KEY, payload text)`,
		fmt.Sprintf(`INSERT INTO guard_items SELECT g, 'item ' || g FROM generate_series(1, %d) g`, keys),
		`SELECT bf_track('guard_items', 'id')`,
		`ANALYZE guard_items`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	fmt.Printf("created guard_items with %d rows in %v\n", keys, time.Since(t0).Round(time.Second))
	return nil
}
