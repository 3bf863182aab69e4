package e2e

import (
	"math"
	"testing"
	"time"

	bloomfilter "github.com/bloomfilter-pg/bloomfilter/clients/go"
	"github.com/jackc/pgx/v4"
)

const serverFilterSQL = `SELECT bf_add_all(bf_create(1000, 0.01, 9), ARRAY(SELECT g * 3 FROM generate_series(1, 700) g))`

// TestScanner scans a bloomfilter column (text results), its ::bytea, and
// with pgx native the binary result, into a *Filter.
func TestScanner(t *testing.T) {
	var want []byte
	if err := conn.QueryRow(ctx, serverFilterSQL+`::bytea`).Scan(&want); err != nil {
		t.Fatal(err)
	}
	check := func(name string, f *bloomfilter.Filter) {
		if string(f.Bytes()) != string(want) {
			t.Errorf("%s: scanned filter differs from the server's bytes", name)
		}
		if ok, err := f.Contains(int64(21)); !ok || err != nil {
			t.Errorf("%s: lost a key: %v", name, err)
		}
	}
	for _, d := range drivers() {
		for _, q := range []string{serverFilterSQL, serverFilterSQL + `::bytea`} {
			var f bloomfilter.Filter
			if err := d.db.QueryRowContext(ctx, q).Scan(&f); err != nil {
				t.Fatalf("%s %s: %v", d.name, q, err)
			}
			check(d.name+" "+q[len(q)-6:], &f)
		}
	}
	for _, format := range []int16{pgx.TextFormatCode, pgx.BinaryFormatCode} {
		var f bloomfilter.Filter
		if err := conn.QueryRow(ctx, serverFilterSQL, pgx.QueryResultFormats{format}).Scan(&f); err != nil {
			t.Fatalf("pgx native format %d: %v", format, err)
		}
		check("pgx native", &f)
	}
}

// TestValuer sends a filter built by the client as a bloomfilter parameter
// with each driver; the server finds it equal, byte for byte, to the same
// adds made by the server.
func TestValuer(t *testing.T) {
	f, _ := bloomfilter.New(8, 5, -3)
	for i := 0; i < 300; i++ {
		f.Add(int64(i * i))
	}
	const serverSide = `bf_add_all(bf_create_sized(4096, 5, -3), ARRAY(SELECT g * g FROM generate_series(0, 299) g)::bigint[])`
	for _, d := range drivers() {
		var equal, sameBytes bool
		err := d.db.QueryRowContext(ctx, `SELECT $1::bloomfilter = `+serverSide+`,
			$1::bloomfilter::bytea = `+serverSide+`::bytea`, f).Scan(&equal, &sameBytes)
		if err != nil || !equal || !sameBytes {
			t.Errorf("%s: equal %v, same bytes %v, %v", d.name, equal, sameBytes, err)
		}
		var back bloomfilter.Filter
		if err := d.db.QueryRowContext(ctx, `SELECT $1::bytea::bloomfilter`, f.Bytes()).Scan(&back); err != nil || !back.Equal(f) {
			t.Errorf("%s: bytes round trip: %v", d.name, err)
		}
	}
}

// TestSetOpsAndInfo: Union and Intersect give bf_union's and
// bf_intersect's bytes; Info agrees with bf_info.
func TestSetOpsAndInfo(t *testing.T) {
	var a, b, u, x []byte
	err := conn.QueryRow(ctx, `WITH f AS (SELECT
			bf_add_all(bf_create(5000, 0.02, 1), ARRAY(SELECT g FROM generate_series(1, 4000) g)) AS a,
			bf_add_all(bf_create(5000, 0.02, 1), ARRAY(SELECT g FROM generate_series(3000, 9000) g)) AS b)
		SELECT a::bytea, b::bytea, bf_union(a, b)::bytea, bf_intersect(a, b)::bytea FROM f`).Scan(&a, &b, &u, &x)
	if err != nil {
		t.Fatal(err)
	}
	fa, _ := bloomfilter.Parse(a)
	fb, _ := bloomfilter.Parse(b)
	cu, err := fa.Union(fb)
	if err != nil || string(cu.Bytes()) != string(u) {
		t.Errorf("union differs from bf_union: %v", err)
	}
	cx, err := fa.Intersect(fb)
	if err != nil || string(cx.Bytes()) != string(x) {
		t.Errorf("intersection differs from bf_intersect: %v", err)
	}
	for _, v := range [][]byte{a, u, x} {
		var bitsSet, nbits, inserted int64
		var fill, card, fpr float64
		var saturated, portable bool
		err := conn.QueryRow(ctx, `SELECT nbits, inserted, bits_set, fill_ratio, estimated_cardinality,
				estimated_fpr, saturated, portable FROM bf_info($1::bytea::bloomfilter)`, v).
			Scan(&nbits, &inserted, &bitsSet, &fill, &card, &fpr, &saturated, &portable)
		if err != nil {
			t.Fatal(err)
		}
		f, _ := bloomfilter.Parse(v)
		in := f.Info()
		if int64(in.NBits) != nbits || int64(in.Inserted) != inserted || int64(in.BitsSet) != bitsSet ||
			in.Saturated != saturated || in.Portable != portable ||
			!near(in.FillRatio, fill) || !near(in.EstimatedCardinality, card) || !near(in.EstimatedFPR, fpr) {
			t.Errorf("Info %+v, bf_info nbits %d inserted %d set %d fill %v card %v fpr %v sat %v",
				in, nbits, inserted, bitsSet, fill, card, fpr, saturated)
		}
	}
}

func near(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b))
}

// TestNativeDriverValues: values as the drivers return them (time.Time,
// numeric as text, uuid as text or bytes) probe filters of their family.
func TestNativeDriverValues(t *testing.T) {
	if err := exec(`DROP TABLE IF EXISTS e2e_vals`,
		`CREATE TABLE e2e_vals AS SELECT
			'2001-02-03'::date + g AS d,
			'2001-02-03 04:05:06.789'::timestamp + g * interval '1 h 1.000001 s' AS ts,
			'2001-02-03 04:05:06.789+02'::timestamptz + g * interval '1 h 1.000001 s' AS tz,
			(g / 4.0)::numeric(10, 3) AS n,
			md5(g::text)::uuid AS u
		  FROM generate_series(1, 500) g`); err != nil {
		t.Fatal(err)
	}
	cols := []string{"d", "ts", "tz", "n", "u"}
	filters := map[string]*bloomfilter.Filter{}
	for _, c := range cols {
		var b []byte
		if err := conn.QueryRow(ctx, `SELECT bf_agg(`+c+`, 0.001)::bytea FROM e2e_vals`).Scan(&b); err != nil {
			t.Fatal(err)
		}
		filters[c], _ = bloomfilter.Parse(b)
	}
	for _, d := range drivers() {
		rows, err := d.db.QueryContext(ctx, `SELECT d, ts, tz, n, u FROM e2e_vals`)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			var dt, ts, tz time.Time
			var num, u string
			if err := rows.Scan(&dt, &ts, &tz, &num, &u); err != nil {
				t.Fatalf("%s: %v", d.name, err)
			}
			for i, v := range []any{dt, ts, tz, num, u} {
				if ok, err := filters[cols[i]].Contains(v); !ok || err != nil {
					t.Fatalf("%s: %s value %v (%T) not found: %v", d.name, cols[i], v, v, err)
				}
			}
			n++
		}
		rows.Close()
		t.Logf("%s: %d rows of date, timestamp, timestamptz, numeric, uuid found", d.name, n)
	}
}
