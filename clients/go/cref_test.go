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

func TestXXH3DigestLibxxhash(t *testing.T) {
	lib := func(b []byte, s uint64) uint64 {
		return libxxh3Batch(b, []int64{0}, []int64{int64(len(b))}, s)[0]
	}
	if got := hashDigest(lib); got != xxh3Digest {
		t.Errorf("libxxhash digest %#x, xxh3Digest in xxh3_test.go is %#x", got, uint64(xxh3Digest))
	}
}
