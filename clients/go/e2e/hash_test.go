package e2e

import (
	"testing"

	bloomfilter "github.com/bloomfilter-pg/bloomfilter/clients/go"
)

// Value generators per SQL type: an expression over g (1..N) and a list of
// edge values, each cast to the type.
var hashCases = []struct {
	typ   string
	gen   string
	edges []string
}{
	{"int2", "(g * 37 % 65536 - 32768)", []string{"0", "-1", "32767", "-32768"}},
	{"int4", "(g * 2654435761 % 4294967296 - 2147483648)", []string{"2147483647", "-2147483648"}},
	{"int8", "(g::numeric * 11400714819323198485 % 18446744073709551616 - 9223372036854775808)",
		[]string{"9223372036854775807", "-9223372036854775808"}},
	{"float4", "((g * 7919 % 100003) / 37.0 - 1000)", []string{"'NaN'", "'Infinity'", "'-Infinity'", "'-0'", "'1.4e-45'", "'3.4028235e38'"}},
	{"float8", "((g * 7919 % 100003) / 3.7e5 - 0.1)", []string{"'NaN'", "'-Infinity'", "'-0'", "'5e-324'", "'1.7976931348623157e308'", "0.1"}},
	{"numeric", "((g * 7919 % 100003) / 1000.0 - 50)::numeric(20, 6)",
		[]string{"'NaN'", "'Infinity'", "'-Infinity'", "'1.50'", "'-0.000'", "'1e100'", "'123456789012345678901234567890.123'", "'0.0000000001'"}},
	{"text", "md5(g::text) || repeat('x', g % 300)", []string{"''", "'héllo'", "'日本'"}},
	{"varchar", "'v' || g", nil},
	{"name", "'n' || g", nil},
	{"bpchar", "('b' || g)::char(12)", []string{"''", "'   '"}},
	{"bytea", "decode(md5(g::text) || repeat('00', g % 40), 'hex')", []string{"''", `'\x00'`}},
	{"uuid", "md5(g::text)::uuid", []string{"'00000000-0000-0000-0000-000000000000'"}},
	{"bool", "(g % 2 = 0)", nil},
	{"date", "'2000-01-01'::date + (g * 7919 % 2000000 - 1000000)",
		[]string{"'infinity'", "'-infinity'", "'4713-01-01 BC'", "'0001-01-01 BC'", "'5874897-12-31'", "'1999-12-31'"}},
	{"timestamp", "'2000-01-01'::timestamp + (g * 7919 % 2000000 - 1000000) * interval '1234.567891 s'",
		[]string{"'infinity'", "'-infinity'", "'4713-01-01 00:00:00 BC'", "'294276-12-31 23:59:59.999999'", "'1999-12-31 23:59:59.5'"}},
	{"timestamptz", "'2000-01-01'::timestamptz + (g * 7919 % 2000000 - 1000000) * interval '1234.567891 s'",
		[]string{"'infinity'", "'-infinity'", "'1000-06-01 12:00:00+00 BC'", "'1850-01-01 00:00:00+00'", "'2024-03-10 02:30:00 America/New_York'"}},
}

// TestHashParity compares Hash with bf_hash for values of every portable
// family, from the server's text output of each, with several seeds and
// (for timestamptz) a time zone with odd historical offsets.
func TestHashParity(t *testing.T) {
	if err := exec(`SET TimeZone = 'Asia/Kolkata'`); err != nil {
		t.Fatal(err)
	}
	defer exec(`RESET TimeZone`)
	total := 0
	for _, c := range hashCases {
		q := `SELECT v::text, s, bf_hash(v, s) FROM (SELECT (` + c.gen + `)::` + c.typ + ` AS v FROM generate_series(1, 2000) g`
		for _, e := range c.edges {
			q += ` UNION ALL SELECT (` + e + `)::` + c.typ
		}
		q += `) vals, (VALUES (0::bigint), (42), (-1), (-9223372036854775808)) seeds(s)`
		rows, err := conn.Query(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", c.typ, err)
		}
		n := 0
		for rows.Next() {
			var text string
			var seed, want int64
			if err := rows.Scan(&text, &seed, &want); err != nil {
				t.Fatal(err)
			}
			v, err := bloomfilter.ValueFromText(c.typ, text)
			if err != nil {
				t.Fatalf("%s %q: %v", c.typ, text, err)
			}
			n++
			got, _, err := bloomfilter.Hash(v, seed)
			if err != nil || int64(got) != want {
				t.Errorf("%s %q seed %d: client %d %v, bf_hash %d", c.typ, text, seed, int64(got), err, want)
			}
		}
		if rows.Err() != nil {
			t.Fatal(rows.Err())
		}
		total += n
	}
	t.Logf("%d hashes equal bf_hash", total)
}

// TestRecordAndEnumParity: composite keys with NULL fields, and enums.
func TestRecordAndEnumParity(t *testing.T) {
	if err := exec(`DROP TYPE IF EXISTS e2e_mood`, `CREATE TYPE e2e_mood AS ENUM ('sad', 'ok', 'happy', 'ünïcode')`); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, `SELECT m::text, bf_hash(m, 7) FROM unnest(enum_range(NULL::e2e_mood)) m`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var label string
		var want int64
		rows.Scan(&label, &want)
		if got, _, _ := bloomfilter.Hash(bloomfilter.Enum(label), 7); int64(got) != want {
			t.Errorf("enum %q: %d, bf_hash %d", label, int64(got), want)
		}
	}
	rows, err = conn.Query(ctx, `SELECT u, a, n::text, bf_hash(ROW(u, a, n), 3)
		FROM (SELECT CASE WHEN g % 5 = 0 THEN NULL ELSE g END::int AS u,
		             CASE WHEN g % 7 = 0 THEN NULL ELSE 'attr-' || g END AS a,
		             CASE WHEN g % 3 = 0 THEN NULL ELSE g / 8.0 END::numeric AS n
		        FROM generate_series(1, 3000) g) x`)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var u *int32
		var a, num *string
		var want int64
		if err := rows.Scan(&u, &a, &num, &want); err != nil {
			t.Fatal(err)
		}
		rec := bloomfilter.Record{bloomfilter.Null(bloomfilter.FamilyInteger), bloomfilter.Null(bloomfilter.FamilyText),
			bloomfilter.Null(bloomfilter.FamilyNumeric)}
		if u != nil {
			rec[0] = *u
		}
		if a != nil {
			rec[1] = *a
		}
		if num != nil {
			rec[2] = bloomfilter.Numeric(*num)
		}
		got, fam, err := bloomfilter.Hash(rec, 3)
		if err != nil || int64(got) != want || fam != bloomfilter.FamilyRecord {
			t.Fatalf("record (%v): %d %v, bf_hash %d", rec, int64(got), err, want)
		}
		n++
	}
	t.Logf("%d records and the enum labels hash as bf_hash", n)
}
