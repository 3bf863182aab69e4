// End-to-end tests of the Go client against a PostgreSQL server with the
// extension, through lib/pq and pgx v4 (database/sql and native): a tracked
// table's filter read with each driver answers 100 000 probes exactly as
// bf_might_contain does and, after inserts and a refresh, finds every new
// key; hashes of every portable family equal bf_hash; a growing filter
// read with each driver finds its members and answers as bf_contains;
// values the server rejects (plain and growing) are rejected with the
// same SQLSTATE.
//
// Run by test/suites/71-client-go.sh inside pg_virtualenv (connection from
// the PG* environment variables).
package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"testing"
	"time"

	bloomfilter "github.com/bloomfilter-pg/bloomfilter/clients/go"
	"github.com/jackc/pgconn"
	"github.com/jackc/pgx/v4"
	_ "github.com/jackc/pgx/v4/stdlib"
	_ "github.com/lib/pq"
)

var (
	ctx   = context.Background()
	dbPQ  *sql.DB   // lib/pq
	dbPGX *sql.DB   // pgx through database/sql
	conn  *pgx.Conn // pgx native
	nkeys = envInt("BF_E2E_KEYS", 10000)
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func TestMain(m *testing.M) {
	// pg_virtualenv sets PGSYSCONFDIR, which lib/pq refuses (it panics);
	// nothing here needs it
	os.Unsetenv("PGSYSCONFDIR")
	var err error
	if dbPQ, err = sql.Open("postgres", ""); err == nil {
		dbPGX, err = sql.Open("pgx", "")
	}
	if err == nil {
		conn, err = pgx.Connect(ctx, "")
	}
	if err == nil {
		err = setup()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e setup:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func exec(sqls ...string) error {
	for _, s := range sqls {
		if _, err := conn.Exec(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

// setup creates the tables: nkeys bigint keys (multiples of 7) tracked by
// the index method, text keys tracked by the trigger method, and a
// user × attribute table with a two-column bloomfilter index.
func setup() error {
	return exec(
		`CREATE EXTENSION IF NOT EXISTS bloomfilter`,
		`DROP TABLE IF EXISTS e2e_keys, e2e_names, e2e_attrs`,
		`CREATE TABLE e2e_keys (id bigint)`,
		fmt.Sprintf(`INSERT INTO e2e_keys SELECT g * 7 FROM generate_series(1, %d) g`, nkeys),
		`SELECT bf_track('e2e_keys', 'id')`,
		`CREATE TABLE e2e_names (name text)`,
		`INSERT INTO e2e_names SELECT 'user-' || g FROM generate_series(1, 20000) g`,
		`SELECT bf_track('e2e_names', 'name', method => 'trigger')`,
		`CREATE TABLE e2e_attrs (user_id int, attr text)`,
		`INSERT INTO e2e_attrs SELECT u, 'attr-' || (u * 31 + a) % 97
		   FROM generate_series(1, 5000) u, generate_series(1, 4) a`,
		`CREATE INDEX e2e_attrs_bf ON e2e_attrs USING bloomfilter (user_id, attr)`,
	)
}

type driver struct {
	name string
	db   *sql.DB
}

func drivers() []driver { return []driver{{"lib/pq", dbPQ}, {"pgx", dbPGX}} }

// serverAnswers asks bf_might_contain about every probe in one query.
func serverAnswers(t *testing.T, probes []int64) []bool {
	rows, err := conn.Query(ctx, `SELECT bf_might_contain('e2e_keys'::regclass, 'id', p)
		FROM unnest($1::int8[]) WITH ORDINALITY AS u(p, i) ORDER BY i`, probes)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []bool
	for rows.Next() {
		var b bool
		if err := rows.Scan(&b); err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	if rows.Err() != nil || len(out) != len(probes) {
		t.Fatalf("server answers: %v (%d of %d)", rows.Err(), len(out), len(probes))
	}
	return out
}

func TestTrackedFilterProbes(t *testing.T) {
	// half present (multiples of 7 in the table), half absent
	r := rand.New(rand.NewSource(5))
	probes := make([]int64, envInt("BF_E2E_PROBES", 10000))
	for i := range probes {
		if i%2 == 0 {
			probes[i] = 7 * (1 + r.Int63n(int64(nkeys)))
		} else {
			probes[i] = 7*r.Int63n(int64(nkeys)*3) + 1 + r.Int63n(6)
		}
	}
	want := serverAnswers(t, probes)
	for _, d := range drivers() {
		t.Run(d.name, func(t *testing.T) {
			ref := bloomfilter.NewRefresher(bloomfilter.NewTrackedSource(d.db, "e2e_keys", "id"),
				bloomfilter.RefresherOptions{})
			if err := ref.Refresh(ctx); err != nil {
				t.Fatal(err)
			}
			f := ref.Filter()
			fp, diff := 0, 0
			for i, p := range probes {
				got, err := f.Contains(p)
				if err != nil {
					t.Fatal(err)
				}
				if got != want[i] {
					diff++
					if diff < 10 {
						t.Errorf("probe %d: client %v, server %v", p, got, want[i])
					}
				}
				if got && i%2 == 1 {
					fp++
				}
			}
			if diff > 0 {
				t.Fatalf("%d of %d answers differ from bf_might_contain", diff, len(probes))
			}
			t.Logf("%d probes identical to bf_might_contain (%d false positives among %d absent keys); %s",
				len(probes), fp, len(probes)/2, f.Info().Family)
		})
	}
}

// TestRefreshFindsNewKeys inserts keys after the first fetch; one refresh
// later every one of them is found.
func TestRefreshFindsNewKeys(t *testing.T) {
	for i, d := range drivers() {
		t.Run(d.name, func(t *testing.T) {
			ref := bloomfilter.NewRefresher(bloomfilter.NewTrackedSource(d.db, "e2e_keys", "id"),
				bloomfilter.RefresherOptions{Interval: 50 * time.Millisecond})
			if err := ref.Refresh(ctx); err != nil {
				t.Fatal(err)
			}
			base := int64(1e12 * (i + 1))
			if err := exec(fmt.Sprintf(`INSERT INTO e2e_keys SELECT %d + g FROM generate_series(1, 1000) g`, base)); err != nil {
				t.Fatal(err)
			}
			rctx, cancel := context.WithCancel(ctx)
			defer cancel()
			go ref.Run(rctx)
			deadline := time.Now().Add(10 * time.Second)
			for {
				missing := 0
				for k := base + 1; k <= base+1000; k++ {
					if ok, err := ref.Contains(k); err != nil {
						t.Fatal(err)
					} else if !ok {
						missing++
					}
				}
				if missing == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%d of 1000 new keys still missing; status %+v", missing, ref.Status())
				}
				time.Sleep(20 * time.Millisecond)
			}
			st := ref.Status()
			t.Logf("all new keys found; refreshes %d (full %d, patches %d), %d bytes, age %v",
				st.Stats.Refreshes, st.Stats.FullFetches, st.Stats.Patches, st.Stats.BytesReceived, st.Age)
		})
	}
}

// TestTriggerMethodAndIndex reads a trigger-tracked text column and a
// two-column index (user × attribute) and compares with the server.
func TestTriggerMethodAndIndex(t *testing.T) {
	for _, d := range drivers() {
		names := bloomfilter.NewRefresher(bloomfilter.NewTrackedSource(d.db, "e2e_names", "name"), bloomfilter.RefresherOptions{})
		attrs := bloomfilter.NewRefresher(bloomfilter.NewIndexSource(d.db, "e2e_attrs_bf"), bloomfilter.RefresherOptions{})
		if err := names.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		if err := attrs.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		rows, err := conn.Query(ctx, `SELECT 'user-' || g, bf_might_contain('e2e_names'::regclass, 'name', 'user-' || g)
			FROM generate_series(1, 40000) g`)
		if err != nil {
			t.Fatal(err)
		}
		n := compareRows(t, rows, func(v string) (bool, error) { return names.Contains(v) })
		rows, err = conn.Query(ctx, `SELECT u, 'attr-' || a, bf_index_contains('e2e_attrs_bf'::regclass, ROW(u, 'attr-' || a))
			FROM generate_series(1, 10000) u, generate_series(0, 3) a`)
		if err != nil {
			t.Fatal(err)
		}
		m := 0
		for rows.Next() {
			var u int32
			var a string
			var want bool
			if err := rows.Scan(&u, &a, &want); err != nil {
				t.Fatal(err)
			}
			got, err := attrs.Contains(bloomfilter.Record{u, a})
			if err != nil || got != want {
				t.Fatalf("%s: (%d, %s): client %v %v, server %v", d.name, u, a, got, err, want)
			}
			m++
		}
		t.Logf("%s: %d text probes (trigger method) and %d user × attribute probes (index) agree", d.name, n, m)
	}
}

func compareRows(t *testing.T, rows pgx.Rows, contains func(string) (bool, error)) int {
	t.Helper()
	defer rows.Close()
	n := 0
	for rows.Next() {
		var v string
		var want bool
		if err := rows.Scan(&v, &want); err != nil {
			t.Fatal(err)
		}
		got, err := contains(v)
		if err != nil || got != want {
			t.Fatalf("%q: client %v %v, server %v", v, got, err, want)
		}
		n++
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	return n
}

func sqlState(err error) string {
	if pe, ok := err.(*pgconn.PgError); ok {
		return pe.Code
	}
	return ""
}
