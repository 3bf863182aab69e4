// XXH3-64 with a seed, the hash function of format version 1
// (docs/FORMAT.md §2), in pure Go.  It is checked against libxxhash on
// random inputs of every length 0–300 by xxh3_cgo_test.go (build tag
// libxxhash), so that the client needs neither cgo nor a C library.

package bloomfilter

import (
	"encoding/binary"
	"math/bits"
)

const (
	prime32_1 = 0x9E3779B1
	prime32_2 = 0x85EBCA77
	prime32_3 = 0xC2B2AE3D
	prime64_1 = 0x9E3779B185EBCA87
	prime64_2 = 0xC2B2AE3D27D4EB4F
	prime64_3 = 0x165667B19E3779F9
	prime64_4 = 0x85EBCA77C2B2AE63
	prime64_5 = 0x27D4EB2F165667C5
	primeMx1  = 0x165667919E3779F9
	primeMx2  = 0x9FB21C651E98DF25

	stripeLen   = 64
	secretSize  = 192
	midsizeMax  = 240
	secretMin   = 136
	blockStripe = (secretSize - stripeLen) / 8 // stripes per block
)

// The default 192-byte secret of XXH3 (a constant of the algorithm).
var kSecret = [secretSize]byte{
	0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
	0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
	0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
	0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
	0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
	0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
	0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
	0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
	0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
	0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
	0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
	0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,
}

func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }
func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }

func xxh64Avalanche(h uint64) uint64 {
	h ^= h >> 33
	h *= prime64_2
	h ^= h >> 29
	h *= prime64_3
	return h ^ h>>32
}

func xxh3Avalanche(h uint64) uint64 {
	h ^= h >> 37
	h *= primeMx1
	return h ^ h>>32
}

func rrmxmx(h, length uint64) uint64 {
	h ^= bits.RotateLeft64(h, 49) ^ bits.RotateLeft64(h, 24)
	h *= primeMx2
	h ^= (h >> 35) + length
	h *= primeMx2
	return h ^ h>>28
}

// mulFold64 is the 128-bit product of a and b, high half xor low half.
func mulFold64(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

func mix16(in, sec []byte, seed uint64) uint64 {
	return mulFold64(le64(in)^(le64(sec)+seed), le64(in[8:])^(le64(sec[8:])-seed))
}

// Precomputed secret words of the 8-byte case, the hot path of integer keys.
var bitflip8 = le64(kSecret[8:]) ^ le64(kSecret[16:])

// xxh3Int64 is XXH3-64 of the 8 little-endian bytes of v: the 4–8 byte
// case with both 32-bit reads known, so no byte slice is built.
func xxh3Int64(v, seed uint64) uint64 {
	s := seed ^ uint64(bits.ReverseBytes32(uint32(seed)))<<32
	return rrmxmx(bits.RotateLeft64(v, 32)^(bitflip8-s), 8)
}

// xxh3 returns XXH3_64bits_withSeed(data, seed).
func xxh3(data []byte, seed uint64) uint64 {
	n := len(data)
	switch {
	case n == 0:
		return xxh64Avalanche(seed ^ le64(kSecret[56:]) ^ le64(kSecret[64:]))
	case n <= 3:
		c := uint32(data[0])<<16 | uint32(data[n>>1])<<24 | uint32(data[n-1]) | uint32(n)<<8
		flip := uint64(le32(kSecret[0:])^le32(kSecret[4:])) + seed
		return xxh64Avalanche(uint64(c) ^ flip)
	case n <= 8:
		s := seed ^ uint64(bits.ReverseBytes32(uint32(seed)))<<32
		in64 := uint64(le32(data[n-4:])) + uint64(le32(data))<<32
		flip := (le64(kSecret[8:]) ^ le64(kSecret[16:])) - s
		return rrmxmx(in64^flip, uint64(n))
	case n <= 16:
		flip1 := (le64(kSecret[24:]) ^ le64(kSecret[32:])) + seed
		flip2 := (le64(kSecret[40:]) ^ le64(kSecret[48:])) - seed
		lo := le64(data) ^ flip1
		hi := le64(data[n-8:]) ^ flip2
		acc := uint64(n) + bits.ReverseBytes64(lo) + hi + mulFold64(lo, hi)
		return xxh3Avalanche(acc)
	case n <= 128:
		acc := uint64(n) * prime64_1
		if n > 32 {
			if n > 64 {
				if n > 96 {
					acc += mix16(data[48:], kSecret[96:], seed)
					acc += mix16(data[n-64:], kSecret[112:], seed)
				}
				acc += mix16(data[32:], kSecret[64:], seed)
				acc += mix16(data[n-48:], kSecret[80:], seed)
			}
			acc += mix16(data[16:], kSecret[32:], seed)
			acc += mix16(data[n-32:], kSecret[48:], seed)
		}
		acc += mix16(data, kSecret[0:], seed)
		acc += mix16(data[n-16:], kSecret[16:], seed)
		return xxh3Avalanche(acc)
	case n <= midsizeMax:
		acc := uint64(n) * prime64_1
		for i := 0; i < 8; i++ {
			acc += mix16(data[16*i:], kSecret[16*i:], seed)
		}
		acc = xxh3Avalanche(acc)
		for i := 8; i < n/16; i++ {
			acc += mix16(data[16*i:], kSecret[16*(i-8)+3:], seed)
		}
		acc += mix16(data[n-16:], kSecret[secretMin-17:], seed)
		return xxh3Avalanche(acc)
	}
	return xxh3Long(data, seed)
}

// xxh3Long hashes inputs over 240 bytes with a secret derived from the seed.
func xxh3Long(data []byte, seed uint64) uint64 {
	var secret [secretSize]byte
	if seed == 0 {
		secret = kSecret
	} else {
		for i := 0; i < secretSize; i += 16 {
			binary.LittleEndian.PutUint64(secret[i:], le64(kSecret[i:])+seed)
			binary.LittleEndian.PutUint64(secret[i+8:], le64(kSecret[i+8:])-seed)
		}
	}
	acc := [8]uint64{prime32_3, prime64_1, prime64_2, prime64_3,
		prime64_4, prime32_2, prime64_5, prime32_1}
	n := len(data)
	blockLen := stripeLen * blockStripe
	nblocks := (n - 1) / blockLen
	for b := 0; b < nblocks; b++ {
		for s := 0; s < blockStripe; s++ {
			accumulate512(&acc, data[b*blockLen+s*stripeLen:], secret[s*8:])
		}
		scramble(&acc, secret[secretSize-stripeLen:])
	}
	nstripes := ((n - 1) - blockLen*nblocks) / stripeLen
	for s := 0; s < nstripes; s++ {
		accumulate512(&acc, data[nblocks*blockLen+s*stripeLen:], secret[s*8:])
	}
	accumulate512(&acc, data[n-stripeLen:], secret[secretSize-stripeLen-7:])

	result := uint64(n) * prime64_1
	for i := 0; i < 4; i++ {
		sec := secret[11+16*i:]
		result += mulFold64(acc[2*i]^le64(sec), acc[2*i+1]^le64(sec[8:]))
	}
	return xxh3Avalanche(result)
}

func accumulate512(acc *[8]uint64, in, sec []byte) {
	for i := 0; i < 8; i++ {
		v := le64(in[8*i:])
		k := v ^ le64(sec[8*i:])
		acc[i^1] += v
		acc[i] += uint64(uint32(k)) * (k >> 32)
	}
}

func scramble(acc *[8]uint64, sec []byte) {
	for i := 0; i < 8; i++ {
		a := acc[i]
		a ^= a >> 47
		a ^= le64(sec[8*i:])
		acc[i] = a * prime32_1
	}
}
