//go:build cref

package bloomfilter

import (
	"math"
	"math/rand"
	"os"
	"strconv"
	"testing"
)

// Seeds the tests and the server use, plus extremes and random ones.
func xxh3TestSeeds() []uint64 {
	seeds := []uint64{0, 1, 42, 12345, math.MaxUint64, 1 << 63, math.MaxInt64,
		0x9E3779B97F4A7C15}
	for _, s := range []int64{-1, -42, -12345, 7, 100} {
		seeds = append(seeds, uint64(s))
	}
	seeds = append(seeds, conformanceSeeds()...)
	r := rand.New(rand.NewSource(7))
	for i := 0; i < 4; i++ {
		seeds = append(seeds, r.Uint64())
	}
	return seeds
}

// TestXXH3AgainstLibxxhash compares the pure-Go XXH3 with libxxhash on
// BF_XXH3_INPUTS (default 100 000) random inputs of every length 0–300
// for every seed of xxh3TestSeeds.
func TestXXH3AgainstLibxxhash(t *testing.T) {
	perLen := 100000
	if s := os.Getenv("BF_XXH3_INPUTS"); s != "" {
		perLen, _ = strconv.Atoi(s)
	}
	if testing.Short() {
		perLen = 2000
	}
	r := rand.New(rand.NewSource(1))
	seeds := xxh3TestSeeds()
	total := 0
	for length := 0; length <= 300; length++ {
		buf := make([]byte, perLen*length)
		r.Read(buf)
		// some inputs of all-zero and all-0xFF bytes as well
		if perLen > 2 && length > 0 {
			for i := 0; i < length; i++ {
				buf[i] = 0
				buf[length+i] = 0xFF
			}
		}
		off := make([]int64, perLen)
		lens := make([]int64, perLen)
		for i := range off {
			off[i] = int64(i * length)
			lens[i] = int64(length)
		}
		for _, seed := range seeds {
			want := libxxh3Batch(buf, off, lens, seed)
			for i := range off {
				in := buf[off[i] : off[i]+lens[i]]
				if got := xxh3(in, seed); got != want[i] {
					t.Fatalf("len %d seed %#x input %x: got %#x, libxxhash %#x",
						length, seed, in, got, want[i])
				}
				if length == 8 {
					if got := xxh3Int64(le64(in), seed); got != want[i] {
						t.Fatalf("int64 path seed %#x input %x: got %#x, libxxhash %#x",
							seed, in, got, want[i])
					}
				}
			}
			total += perLen
		}
	}
	t.Logf("%d inputs (%d per length 0-300, %d seeds) agree with libxxhash",
		total, perLen, len(seeds))
}

// TestFPRParsingAgainstStrtod compares parseCDouble with the C library's
// strtod (consumed whole, errno 0) on hand-picked and random tokens.
func TestFPRParsingAgainstStrtod(t *testing.T) {
	tokens := []string{"0.01", "1e-05", "0", "-0", "+0.5", ".5", "1.", ".", "",
		"0x1p-7", "0x1.8p-3", "0x.8", "0x1.", "0x", "0x1p", "0xg", "1e", "1e+",
		"1e-400", "0e-400", "5e-324", "1e-310", "0x1p-1074", "0x1.8p-1070",
		"2.2250738585072014e-308", "2.2250738585072011e-308", "\t0.5", "\v0.5",
		"0.5\t", "inf", "-inf", "infinity", "nan", "nan(123)", "NaN", "1e999",
		"0.30000000000000004", "00.01", "0.01e0", "1_0", "0X1P-3", "1E-5", "--1",
		"+-1", "0.01x", "0x1p-1075", "0x1p-1080", "4.9406564584124654e-324",
		"0.000000000000000000000000000000000000000000000000000000000001e-300"}
	r := rand.New(rand.NewSource(3))
	alphabet := "0123456789.eEpPxX+-aAfF \t"
	for i := 0; i < 200000; i++ {
		n := 1 + r.Intn(8)
		b := make([]byte, n)
		for j := range b {
			b[j] = alphabet[r.Intn(len(alphabet))]
		}
		tokens = append(tokens, string(b))
	}
	for _, tok := range tokens {
		want, wantOK := cStrtod(tok)
		got, gotOK := parseCDouble(tok)
		// non-finite results are rejected by the range check either way
		if wantOK && (math.IsInf(want, 0) || math.IsNaN(want)) {
			wantOK = false
		}
		if gotOK != wantOK || gotOK && math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("%q: parseCDouble = %v, %v; strtod = %v, %v", tok, got, gotOK, want, wantOK)
		}
	}
}

func TestXXH3DigestLibxxhash(t *testing.T) {
	lib := func(b []byte, s uint64) uint64 {
		return libxxh3Batch(b, []int64{0}, []int64{int64(len(b))}, s)[0]
	}
	if got := hashDigest(lib); got != xxh3Digest {
		t.Errorf("libxxhash digest %#x, xxh3Digest in xxh3_test.go is %#x", got, uint64(xxh3Digest))
	}
}
