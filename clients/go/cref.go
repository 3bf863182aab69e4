//go:build cref

// C references for cref_test.go, compiled only with the build tag cref
// (cgo is not allowed in test files): libxxhash's XXH3 (Debian
// libxxhash-dev), against which the pure-Go XXH3 is checked.

package bloomfilter

/*
#cgo LDFLAGS: -lxxhash
#include <stddef.h>
#include <stdint.h>
#include <xxhash.h>

static void
hash_batch(const unsigned char *buf, const int64_t *off, const int64_t *len,
		   int n, uint64_t seed, uint64_t *out)
{
	for (int i = 0; i < n; i++)
		out[i] = XXH3_64bits_withSeed(buf + off[i], (size_t) len[i], seed);
}

*/
import "C"

import "unsafe"

// libxxh3Batch hashes inputs buf[off[i]:off[i]+len[i]] with libxxhash.
func libxxh3Batch(buf []byte, off, length []int64, seed uint64) []uint64 {
	out := make([]uint64, len(off))
	if len(off) == 0 {
		return out
	}
	if len(buf) == 0 {
		buf = []byte{0}
	}
	C.hash_batch((*C.uchar)(unsafe.Pointer(&buf[0])),
		(*C.int64_t)(unsafe.Pointer(&off[0])),
		(*C.int64_t)(unsafe.Pointer(&length[0])),
		C.int(len(off)), C.uint64_t(seed),
		(*C.uint64_t)(unsafe.Pointer(&out[0])))
	return out
}
