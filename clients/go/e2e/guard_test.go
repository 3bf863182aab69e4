package e2e

import (
	"fmt"
	"testing"

	"github.com/jackc/pgx/v4"
)

// Scan guards (bloomfilter.guard_scans) through pgx's statement cache:
// every Query of the same SQL runs one named server-side statement.  Once
// the server uses its generic plan (after the fifth execution), a lookup
// of an absent key reads the bloomfilter index's page alone, not the
// btree's: pages per lookup counted from the table's pg_statio counters,
// with the guard on and off; a key inserted after the plan was made is
// found.

const guardLookup = `SELECT id FROM guard_users WHERE email = $1`

func guardSetup(t *testing.T) {
	if err := exec(
		`DROP TABLE IF EXISTS guard_users`,
		`CREATE TABLE guard_users (id int8, email text)`,
		`INSERT INTO guard_users SELECT g, 'user' || g || '@example.com' FROM generate_series(1, 100000) g`,
		`CREATE INDEX guard_users_email ON guard_users (email)`,
		`CREATE INDEX guard_users_email_bf ON guard_users USING bloomfilter (email)`,
		`VACUUM ANALYZE guard_users`,
	); err != nil {
		t.Fatal(err)
	}
}

// n keys the filter says are absent (no false positive among them)
func guardAbsentKeys(t *testing.T, c *pgx.Conn, n int) []string {
	rows, err := c.Query(ctx, `SELECT k FROM (SELECT 'absent' || g || '@example.org' AS k
		FROM generate_series(1, 1000) g) s
		WHERE NOT bf_index_contains('guard_users_email_bf', k) LIMIT $1`, n)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var keys []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	if len(keys) != n {
		t.Fatalf("%d absent keys, want %d", len(keys), n)
	}
	return keys
}

// blocks of guard_users and its indexes read so far, this session's
// counts flushed first
func guardPages(t *testing.T, c *pgx.Conn) int64 {
	var n int64
	if _, err := c.Exec(ctx, `SELECT pg_stat_force_next_flush()`); err != nil {
		t.Fatal(err)
	}
	if err := c.QueryRow(ctx, `SELECT coalesce(heap_blks_hit, 0) + coalesce(heap_blks_read, 0) +
		coalesce(idx_blks_hit, 0) + coalesce(idx_blks_read, 0)
		FROM pg_statio_user_tables WHERE relname = 'guard_users'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func guardLookupNone(t *testing.T, c *pgx.Conn, key string) {
	var id int64
	if err := c.QueryRow(ctx, guardLookup, key).Scan(&id); err != pgx.ErrNoRows {
		t.Fatalf("lookup of absent %q: %v, id %d", key, err, id)
	}
}

// pages per lookup of executions 6 to 15 of the cached statement, and
// the server's count of its generic plans
func guardPagesPerLookup(t *testing.T, guard string) (float64, int64) {
	c, err := pgx.Connect(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	keys := guardAbsentKeys(t, c, 15)
	if _, err := c.Exec(ctx, `SET bloomfilter.guard_scans = `+guard); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys[:5] {
		guardLookupNone(t, c, k)
	}
	before := guardPages(t, c)
	for _, k := range keys[5:] {
		guardLookupNone(t, c, k)
	}
	after := guardPages(t, c)
	var generic int64
	if err := c.QueryRow(ctx, `SELECT max(generic_plans) FROM pg_prepared_statements
		WHERE statement = $1`, guardLookup).Scan(&generic); err != nil {
		t.Fatal(err)
	}
	return float64(after-before) / 10, generic
}

func TestGuardAfterFifthExecution(t *testing.T) {
	guardSetup(t)
	on, genericOn := guardPagesPerLookup(t, "on")
	off, genericOff := guardPagesPerLookup(t, "off")
	fmt.Printf("pgx statement cache: pages per absent lookup, guarded %.2f, btree alone %.2f (generic plans %d, %d)\n",
		on, off, genericOn, genericOff)
	if genericOn < 10 || genericOff < 10 {
		t.Errorf("generic plans %d, %d: want 10 each", genericOn, genericOff)
	}
	if on > 1.5 || off < 2 || on >= off {
		t.Errorf("pages per absent lookup: guarded %.2f (want <= 1.5), btree alone %.2f (want >= 2)", on, off)
	}

	// a key inserted after the plan was made is found
	c, err := pgx.Connect(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	keys := guardAbsentKeys(t, c, 8)
	for _, k := range keys[:7] {
		guardLookupNone(t, c, k)
	}
	if err := exec(fmt.Sprintf(`INSERT INTO guard_users VALUES (-1, '%s')`, keys[7])); err != nil {
		t.Fatal(err)
	}
	var id int64
	if err := c.QueryRow(ctx, guardLookup, keys[7]).Scan(&id); err != nil || id != -1 {
		t.Errorf("the key inserted after planning: id %d, %v", id, err)
	}
	if err := exec(`DROP TABLE guard_users`); err != nil {
		t.Fatal(err)
	}
}
