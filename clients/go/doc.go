// Package bloomfilter reads and checks Bloom filters of the bloomfilter
// PostgreSQL extension where the application runs, answering exactly as
// the server's bf_contains / bf_might_contain would, without a round trip.
//
// A filter comes from its bytes (filter::bytea, binary COPY, a driver's
// binary result: Parse), from its text form (ParseText), or from a query
// through database/sql (*Filter implements sql.Scanner).  A Refresher keeps
// a local copy of a server's filter current.
//
// A Filter is a plain filter, a growing one (bf_create_growing,
// docs/FORMAT.md §9): a list of plain filters, its layers, or a union
// (§10: filters of any sizes side by side, such as the filter of a table
// distributed by Citus, one layer per shard).  All are read by the same
// functions and answer lookups alike; IsGrowing, IsUnion, Growing and
// Layers tell them apart and describe the layers.  A growing filter grows
// on the server and a union is read-only: Add and set algebra on them
// return ErrGrowing and ErrUnion.
//
// # Values
//
// Contains, Add and Hash take a Go value and hash it as the server hashes
// the SQL value (docs/FORMAT.md §3).  The value's family must be the
// filter's:
//
//	integer     int, int8 … int64, uint8 … uint64 (≤ MaxInt64), named integer types;
//	            all widths hash alike, as int2/int4/int8 do
//	float       float32, float64 (-0 = 0; every NaN alike)
//	numeric     Numeric("1.50"), *big.Int, *big.Rat (finite decimals), *big.Float;
//	            a string against a numeric filter
//	text        string; Bpchar for char(n) (trailing spaces ignored)
//	bytea       []byte
//	uuid        UUID, [16]byte; a string against a uuid filter
//	boolean     bool
//	date        Date, DateOf(t); a time.Time against a date filter
//	timestamp   Timestamp, TimestampOf(t) (wall clock); a time.Time against a timestamp filter
//	timestamptz TimestampTZ, TimestampTZOf(t); a time.Time otherwise
//	enum        Enum("label"); a string against an enum filter
//	record      Record{a, b, ...} or []any (composite keys; nil fields are NULL)
//
// Pointers are dereferenced (nil is NULL) and driver.Valuer values
// (sql.NullInt64, pgtype values, ...) are hashed as the value they send to
// the server.  NULL is never in a filter: Contains answers false, Add does
// nothing.  A value of another family is a *FamilyError, and a filter whose
// hashes only the server can compute (family other) gives ErrNonPortable.
//
// # Concurrency
//
// Lookups on a Filter are safe from many goroutines; Add is not.  A
// Refresher swaps in new immutable snapshots atomically.
package bloomfilter
