package e2e

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand"
	"strings"
	"testing"

	bloomfilter "github.com/bloomfilter-pg/bloomfilter/clients/go"
	"github.com/jackc/pgx/v4"
)

// a growing filter that grew: 500 keys into layers of 10, 20, 40, ...
const growingSQL = `SELECT bf_add_all(bf_create_growing(10, 0.01), ARRAY(SELECT generate_series(1, 500)))`

// a union (FORMAT.md §10) of the same 500 keys: a plain filter of 100 and
// the layers of a growing filter of 400
const unionSQL = `SELECT bf_union_layered(bf_add_all(bf_create(100, 0.01), ARRAY(SELECT generate_series(1, 100))),
	bf_add_all(bf_create_growing(10, 0.01), ARRAY(SELECT generate_series(101, 500))))`

// TestGrowingFromServer reads a growing filter with each driver (the
// bloomfilter column as text and binary results, its ::bytea): the client
// gets the server's bytes and text, finds every member, and agrees with
// bf_info and bf_layers; it refuses to add to it.
func TestGrowingFromServer(t *testing.T) {
	layeredFromServer(t, growingSQL, "growing", bloomfilter.ErrGrowing)
}

// TestUnionFromServer: the same of a union, which is read-only.
func TestUnionFromServer(t *testing.T) {
	layeredFromServer(t, unionSQL, "union", bloomfilter.ErrUnion)
}

// layeredFromServer checks the value of valueSQL (keys 1 to 500), of
// the layout "growing" or "union", whose Add is refused with refused.
func layeredFromServer(t *testing.T, valueSQL, layout string, refused error) {
	var want []byte
	var text string
	var nlayers int
	if err := conn.QueryRow(ctx, `WITH g AS (`+valueSQL+` AS f)
		SELECT f::bytea, f::text, (SELECT count(*) FROM bf_layers(f)) FROM g`).Scan(&want, &text, &nlayers); err != nil {
		t.Fatal(err)
	}
	if nlayers < 3 {
		t.Fatalf("the sample has %d layers: it did not grow", nlayers)
	}
	check := func(name string, f *bloomfilter.Filter) {
		t.Helper()
		if f.Info().Layout != layout || f.NumLayers() != nlayers || string(f.Bytes()) != string(want) || f.String() != text {
			t.Errorf("%s: layout %s, %d layers of %d, same bytes %v, same text %v", name,
				f.Info().Layout, f.NumLayers(), nlayers, string(f.Bytes()) == string(want), f.String() == text)
		}
		for k := int64(1); k <= 500; k++ {
			if ok, err := f.Contains(k); !ok || err != nil {
				t.Fatalf("%s: member %d not found: %v", name, k, err)
			}
		}
	}
	for _, d := range drivers() {
		for _, q := range []string{valueSQL, valueSQL + `::bytea`, valueSQL + `::text`} {
			var f bloomfilter.Filter
			if err := d.db.QueryRowContext(ctx, q).Scan(&f); err != nil {
				t.Fatalf("%s %s: %v", d.name, q, err)
			}
			check(d.name+" "+q[len(q)-7:], &f)
		}
	}
	for _, format := range []int16{pgx.TextFormatCode, pgx.BinaryFormatCode} {
		var f bloomfilter.Filter
		if err := conn.QueryRow(ctx, valueSQL, pgx.QueryResultFormats{format}).Scan(&f); err != nil {
			t.Fatalf("pgx native format %d: %v", format, err)
		}
		check("pgx native", &f)
	}

	f, err := bloomfilter.Parse(want)
	if err != nil {
		t.Fatal(err)
	}
	// absent keys: the same answers as bf_contains
	rows, err := conn.Query(ctx, `WITH g AS MATERIALIZED (`+valueSQL+` AS f)
		SELECT k, bf_contains(g.f, k) FROM g, generate_series(501, 20500) k`)
	if err != nil {
		t.Fatal(err)
	}
	n, fp := 0, 0
	for rows.Next() {
		var k int64
		var wantOK bool
		if err := rows.Scan(&k, &wantOK); err != nil {
			t.Fatal(err)
		}
		if got, err := f.ContainsInt64(k); got != wantOK || err != nil {
			t.Fatalf("key %d: client %v %v, bf_contains %v", k, got, err, wantOK)
		}
		if wantOK {
			fp++
		}
		n++
	}
	rows.Close()
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}

	// bf_info and bf_layers
	var nbits, capacity, inserted, bitsSet int64
	var target, fill, card, fpr float64
	var saturated bool
	var srvLayout string
	if err := conn.QueryRow(ctx, `SELECT layout, nbits, capacity, target_fpr, inserted, bits_set, fill_ratio,
			estimated_cardinality, estimated_fpr, saturated FROM bf_info($1::bytea::bloomfilter)`, want).
		Scan(&srvLayout, &nbits, &capacity, &target, &inserted, &bitsSet, &fill, &card, &fpr, &saturated); err != nil {
		t.Fatal(err)
	}
	in := f.Info()
	if in.Layout != layout || srvLayout != layout || int64(in.NBits) != nbits || in.Capacity != capacity || in.TargetFPR != target ||
		int64(in.Inserted) != inserted || int64(in.BitsSet) != bitsSet || !near(in.FillRatio, fill) ||
		!near(in.EstimatedCardinality, card) || !near(in.EstimatedFPR, fpr) || in.Saturated != saturated {
		t.Errorf("Info %+v; bf_info %s nbits %d capacity %d target %v inserted %d set %d fill %v card %v fpr %v sat %v",
			in, srvLayout, nbits, capacity, target, inserted, bitsSet, fill, card, fpr, saturated)
	}
	lrows, err := conn.Query(ctx, `SELECT nbits, nhashes, capacity, target_fpr, inserted, bits_set, estimated_fpr
		FROM bf_layers($1::bytea::bloomfilter) ORDER BY layer`, want)
	if err != nil {
		t.Fatal(err)
	}
	layers := f.Layers()
	i := 0
	for ; lrows.Next(); i++ {
		var l bloomfilter.LayerInfo
		var nb, c, ins, set int64
		var k int32
		if err := lrows.Scan(&nb, &k, &c, &l.TargetFPR, &ins, &set, &l.EstimatedFPR); err != nil {
			t.Fatal(err)
		}
		l.NBits, l.NHashes, l.Capacity, l.Inserted, l.BitsSet = uint64(nb), int(k), c, uint64(ins), uint64(set)
		if i >= len(layers) || layers[i].NBits != l.NBits || layers[i].NHashes != l.NHashes ||
			layers[i].Capacity != l.Capacity || layers[i].TargetFPR != l.TargetFPR ||
			layers[i].Inserted != l.Inserted || layers[i].BitsSet != l.BitsSet ||
			!near(layers[i].EstimatedFPR, l.EstimatedFPR) {
			t.Errorf("layer %d: client %+v, bf_layers %+v", i, layers[i], l)
		}
	}
	lrows.Close()
	if i != len(layers) {
		t.Errorf("client %d layers, bf_layers %d", len(layers), i)
	}

	// sent back as a parameter: equal to the server's, byte for byte
	for _, d := range drivers() {
		var equal, sameBytes bool
		err := d.db.QueryRowContext(ctx, `SELECT $1::bloomfilter = g.f, $1::bloomfilter::bytea = g.f::bytea
			FROM (`+valueSQL+` AS f) g`, f).Scan(&equal, &sameBytes)
		if err != nil || !equal || !sameBytes {
			t.Errorf("%s: sent back: equal %v, same bytes %v, %v", d.name, equal, sameBytes, err)
		}
	}
	if _, err := f.Add(int64(501)); !errors.Is(err, refused) {
		t.Errorf("Add on a %s filter: %v", layout, err)
	}
	t.Logf("%d layers; 500 members found with each driver; %d absent keys as bf_contains (%d false positives); bf_info and bf_layers agree",
		nlayers, n, fp)
}

// growingSamples returns growing filters and unions made by the server,
// as bytes.
func growingSamples(t *testing.T) [][]byte {
	var out [][]byte
	for _, q := range []string{
		`SELECT bf_add_all(bf_create_growing(5, 0.01, 2, 3), ARRAY(SELECT generate_series(1, 40)))::bytea`,
		`SELECT bf_add_all(bf_create_growing(4, 0.05, 3), ARRAY(SELECT 'k' || g FROM generate_series(1, 30) g))::bytea`,
		`SELECT bf_add(bf_create_growing(10, 0.01, 4, -1), ROW(1, 'a'::text))::bytea`,
		`SELECT bf_create_growing(10, 0.01)::bytea`,
		`SELECT bf_union_layered(bf_add_all(bf_create(10, 0.01, 3), ARRAY(SELECT generate_series(1, 10))),
			bf_add_all(bf_create(50, 0.05, 3), ARRAY(SELECT generate_series(11, 60))),
			bf_add_all(bf_create_growing(5, 0.01, 2, 3), ARRAY(SELECT generate_series(61, 80))))::bytea`,
		`SELECT bf_union_layered(bf_create(10, 0.01), bf_add(bf_create_sized(1024, 3), 'k'::text))::bytea`,
	} {
		var b []byte
		if err := conn.QueryRow(ctx, q).Scan(&b); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		out = append(out, b)
	}
	return out
}

// TestRejectGrowingParity mutates server-made growing filters and unions (fields of
// the header and of the layers' headers set to random and boundary values,
// lengths changed) and requires the client to accept exactly what the
// server accepts, with the same SQLSTATE.
func TestRejectGrowingParity(t *testing.T) {
	bases := growingSamples(t)
	r := rand.New(rand.NewSource(13))
	boundary := []uint64{0, 1, 2, 3, 4, 5, 10, 15, 16, 17, 63, 64, 65, 0x41, 1 << 23, math.MaxUint32,
		math.MaxInt64, 1 << 63, math.MaxUint64, math.Float64bits(0.5), math.Float64bits(1),
		math.Float64bits(0.9), math.Float64bits(0.01), math.Float64bits(0.001), math.Float64bits(-0.0),
		math.Float64bits(math.NaN()), math.Float64bits(5e-324)}
	grow := []struct{ off, size int }{{0, 4}, {4, 2}, {6, 2}, {8, 4}, {12, 4}, {16, 8}, {24, 8}, {32, 8},
		{40, 8}, {48, 8}, {56, 8}}
	layer := []struct{ off, size int }{{0, 4}, {4, 2}, {8, 1}, {9, 1}, {10, 2}, {12, 4}, {16, 8}, {24, 8},
		{32, 8}, {40, 8}, {48, 8}, {56, 8}}
	n, accepted := 0, 0
	for i := 0; i < 3000; i++ {
		base := bases[r.Intn(len(bases))]
		b := append([]byte(nil), base...)
		// where the layers start
		var starts []int
		for off := 64; off+64 <= len(base); {
			starts = append(starts, off)
			off += 64 + 64*int(binary.LittleEndian.Uint64(base[off+24:]))
		}
		for m := 0; m < 1+r.Intn(2); m++ {
			f, at := grow[r.Intn(len(grow))], 0
			switch r.Intn(8) {
			case 0:
				if len(b) >= 64 {
					b[r.Intn(64)] = byte(r.Intn(256))
				}
				continue
			case 1:
				if len(b) > 0 {
					b = b[:r.Intn(len(b))]
				}
				continue
			case 2:
				b = append(b, make([]byte, 1+r.Intn(64))...)
				continue
			case 3, 4, 5:
				f, at = layer[r.Intn(len(layer))], starts[r.Intn(len(starts))]
			}
			v := boundary[r.Intn(len(boundary))]
			if r.Intn(3) == 0 {
				v = r.Uint64()
			}
			if len(b) >= at+f.off+8 {
				var tmp [8]byte
				binary.LittleEndian.PutUint64(tmp[:], v)
				copy(b[at+f.off:at+f.off+f.size], tmp[:f.size])
			}
		}
		want := serverAccepts(t, `SELECT $1::bytea::bloomfilter IS NOT NULL`, b)
		_, err := bloomfilter.Parse(b)
		got := clientState(err)
		if got != want {
			t.Errorf("bytes %x…: client %q (%v), server %q", b[:min(len(b), 128)], got, err, want)
		}
		n++
		if want == "" {
			accepted++
		}
	}
	t.Logf("%d mutated growing values and unions: client and server agree (%d accepted)", n, accepted)
}

// TestRejectGrowingTextParity mutates the text forms of growing filters
// and unions.
func TestRejectGrowingTextParity(t *testing.T) {
	var texts []string
	for _, b := range growingSamples(t) {
		var s string
		if err := conn.QueryRow(ctx, `SELECT $1::bytea::bloomfilter::text`, b).Scan(&s); err != nil {
			t.Fatal(err)
		}
		texts = append(texts, s)
	}
	values := map[string][]string{
		"capacity": {"0", "1", "-1", "5", "05", "+5", "4", "9223372036854775807", "9223372036854775808", ""},
		"fpr":      {"0.01", "0.010", "1e-2", "0", "1", "0.05", "-0.01", "nan", ""},
		"ratio":    {"0.9", "0.90", "0.8", "9e-1", "0", "1", ""},
		"growth":   {"1", "2", "3", "4", "16", "17", "02", "4294967298", ""},
		"seed":     {"0", "3", "-1", "4"},
		"nhashes":  {"0", "1", "7", "65"},
		"inserted": {"0", "1", "-1"},
	}
	keys := []string{"capacity", "fpr", "ratio", "growth", "seed", "nhashes", "inserted"}
	r := rand.New(rand.NewSource(14))
	n, accepted := 0, 0
	for i := 0; i < 2000; i++ {
		s := texts[r.Intn(len(texts))]
		for m := 0; m < 1+r.Intn(2); m++ {
			switch r.Intn(8) {
			case 0: // leave out, repeat or swap layers
				parts := strings.Split(s, " layer=")
				if len(parts) < 2 {
					continue
				}
				switch j := 1 + r.Intn(len(parts)-1); r.Intn(3) {
				case 0:
					parts = append(parts[:j], parts[j+1:]...)
				case 1:
					parts = append(parts[:j+1], parts[j:]...)
				default:
					k := 1 + r.Intn(len(parts)-1)
					parts[j], parts[k] = parts[k], parts[j]
				}
				s = strings.Join(parts, " layer=")
			case 1: // cut or extend the end
				if r.Intn(2) == 0 {
					s = s[:len(s)-r.Intn(5)]
				} else {
					s += []string{" ", "A", " layer=", " x=1"}[r.Intn(4)]
				}
			default:
				k := keys[r.Intn(len(keys))]
				vs := values[k]
				s = replaceToken(s, k, vs[r.Intn(len(vs))])
			}
		}
		want := serverAccepts(t, `SELECT $1::text::bloomfilter IS NOT NULL`, s)
		_, err := bloomfilter.ParseText(s)
		got := clientState(err)
		if got != want {
			t.Errorf("text %q: client %q (%v), server %q", s[:min(len(s), 200)], got, err, want)
		}
		n++
		if want == "" {
			accepted++
		}
	}
	t.Logf("%d mutated growing and union text forms: client and server agree (%d accepted)", n, accepted)
}
