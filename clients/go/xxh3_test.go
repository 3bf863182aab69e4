package bloomfilter

import (
	"encoding/binary"
	"testing"
)

// Fixed inputs whose hashes are folded into xxh3Digest; cref_test.go
// checks the same digest computed by libxxhash.
var digestSeeds = []uint64{0, ^uint64(0), 42, 1 << 63, 0x9E3779B97F4A7C15}

func digestInput(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + n*13 + i*i)
	}
	return b
}

// hashDigest folds hash(input of length n, seed) for n in 0..300.
func hashDigest(hash func([]byte, uint64) uint64) uint64 {
	var all []byte
	for _, s := range digestSeeds {
		for n := 0; n <= 300; n++ {
			all = binary.LittleEndian.AppendUint64(all, hash(digestInput(n), s))
		}
	}
	return xxh3(all, 0)
}

// computed with libxxhash 0.8.1 (TestXXH3DigestLibxxhash re-checks it)
const xxh3Digest = 0xffbab0af042411d0

func TestXXH3Vectors(t *testing.T) {
	// published values of XXH3_64bits / XXH3_64bits_withSeed
	if got := xxh3(nil, 0); got != 0x2D06800538D394C2 {
		t.Errorf("XXH3(\"\", 0) = %#x", got)
	}
	if got := hashDigest(xxh3); got != xxh3Digest {
		t.Errorf("digest of lengths 0-300 = %#x, want %#x", got, uint64(xxh3Digest))
	}
}

func TestXXH3Int64(t *testing.T) {
	for _, v := range []uint64{0, 1, 42, 1 << 63, ^uint64(0), 0x0123456789ABCDEF} {
		for _, s := range digestSeeds {
			b := binary.LittleEndian.AppendUint64(nil, v)
			if xxh3Int64(v, s) != xxh3(b, s) {
				t.Errorf("xxh3Int64(%#x, %#x) differs from xxh3 of its bytes", v, s)
			}
		}
	}
}

func BenchmarkXXH3Int64(b *testing.B) {
	var acc uint64
	for i := 0; i < b.N; i++ {
		acc += xxh3Int64(uint64(i), 0)
	}
	sink = acc
}

var sink uint64
