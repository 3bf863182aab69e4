// Typed hashing (docs/FORMAT.md §2–3): a Go value is mapped to its element
// family and canonical bytes, exactly as the server encodes the SQL value,
// and hashed with XXH3-64 and the filter's seed.

package bloomfilter

import (
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"time"
)

// errNull marks a NULL value (nil, a nil pointer, a NULL sql.Null*).
var errNull = errors.New("bloomfilter: NULL")

// encoded is a value's family and canonical bytes.
type encoded struct {
	family Family
	detail uint32 // record field families
	bytes  []byte
	i64    int64 // family integer: the value (bytes left nil)
}

func (e *encoded) hash(seed int64) uint64 {
	if e.family == FamilyInteger {
		return xxh3Int64(uint64(e.i64), uint64(seed))
	}
	return xxh3(e.bytes, uint64(seed))
}

func int64Bytes(v int64) []byte {
	b := make([]byte, 8)
	binary.LittleEndian.PutUint64(b, uint64(v))
	return b
}

// canonicalFloat: float8 bytes, -0 as 0, every NaN as one NaN.
func canonicalFloat(x float64) []byte {
	if math.IsNaN(x) {
		return []byte{0, 0, 0, 0, 0, 0, 0xF8, 0x7F}
	}
	if x == 0 {
		x = 0
	}
	b := make([]byte, 8)
	binary.LittleEndian.PutUint64(b, math.Float64bits(x))
	return b
}

// encode maps v to its family and canonical bytes.  want is the family the
// filter expects (FamilyNone if unknown) and wantDetail its record fields:
// a string becomes an enum label, numeric or uuid when the filter holds
// those, a time.Time a date or timestamp, a *big.Int an integer.
func encode(v any, want Family, wantDetail uint32) (encoded, error) {
	switch x := v.(type) {
	case nil:
		return encoded{}, errNull
	case Null:
		return encoded{family: Family(x)}, errNull
	case int64:
		return encoded{family: FamilyInteger, i64: x}, nil
	case int:
		return encoded{family: FamilyInteger, i64: int64(x)}, nil
	case int32:
		return encoded{family: FamilyInteger, i64: int64(x)}, nil
	case int16:
		return encoded{family: FamilyInteger, i64: int64(x)}, nil
	case int8:
		return encoded{family: FamilyInteger, i64: int64(x)}, nil
	case uint8:
		return encoded{family: FamilyInteger, i64: int64(x)}, nil
	case uint16:
		return encoded{family: FamilyInteger, i64: int64(x)}, nil
	case uint32:
		return encoded{family: FamilyInteger, i64: int64(x)}, nil
	case uint:
		return encodeUint(uint64(x))
	case uint64:
		return encodeUint(x)
	case float64:
		return encoded{family: FamilyFloat, bytes: canonicalFloat(x)}, nil
	case float32:
		return encoded{family: FamilyFloat, bytes: canonicalFloat(float64(x))}, nil
	case bool:
		b := byte(0)
		if x {
			b = 1
		}
		return encoded{family: FamilyBoolean, bytes: []byte{b}}, nil
	case string:
		switch want {
		case FamilyEnum:
			return encoded{family: FamilyEnum, bytes: []byte(x)}, nil
		case FamilyNumeric:
			return encode(Numeric(x), want, 0)
		case FamilyUUID:
			u, err := ParseUUID(x)
			if err != nil {
				return encoded{}, err
			}
			return encode(u, want, 0)
		}
		return encoded{family: FamilyText, bytes: []byte(x)}, nil
	case []byte:
		return encoded{family: FamilyBytea, bytes: x}, nil
	case Numeric:
		s, err := numericText(string(x))
		if err != nil {
			return encoded{}, err
		}
		return encoded{family: FamilyNumeric, bytes: []byte(s)}, nil
	case Enum:
		return encoded{family: FamilyEnum, bytes: []byte(x)}, nil
	case Bpchar:
		n := len(x)
		for n > 0 && x[n-1] == ' ' {
			n--
		}
		return encoded{family: FamilyText, bytes: []byte(x[:n])}, nil
	case UUID:
		return encoded{family: FamilyUUID, bytes: append([]byte(nil), x[:]...)}, nil
	case [16]byte:
		return encoded{family: FamilyUUID, bytes: append([]byte(nil), x[:]...)}, nil
	case Date:
		return encoded{family: FamilyDate, bytes: int64Bytes(int64(x))}, nil
	case Timestamp:
		return encoded{family: FamilyTimestamp, bytes: int64Bytes(int64(x))}, nil
	case TimestampTZ:
		return encoded{family: FamilyTimestampTZ, bytes: int64Bytes(int64(x))}, nil
	case time.Time:
		switch want {
		case FamilyDate:
			return encode(DateOf(x), want, 0)
		case FamilyTimestamp:
			return encode(TimestampOf(x), want, 0)
		}
		return encode(TimestampTZOf(x), want, 0)
	case *big.Int:
		if x == nil {
			return encoded{}, errNull
		}
		if want == FamilyInteger && x.IsInt64() {
			return encoded{family: FamilyInteger, i64: x.Int64()}, nil
		}
		return encoded{family: FamilyNumeric, bytes: []byte(x.String())}, nil
	case *big.Rat:
		if x == nil {
			return encoded{}, errNull
		}
		s, err := ratText(x)
		return encoded{family: FamilyNumeric, bytes: []byte(s)}, err
	case *big.Float:
		if x == nil {
			return encoded{}, errNull
		}
		if x.IsInf() && x.Signbit() {
			return encode(Numeric("-Infinity"), want, 0)
		} else if x.IsInf() {
			return encode(Numeric("Infinity"), want, 0)
		}
		r, _ := x.Rat(nil)
		return encode(r, want, 0)
	case Record:
		return encodeRecord(x, wantDetail)
	case []any:
		return encodeRecord(x, wantDetail)
	case driver.Valuer:
		// sql.NullInt64, pgtype values, ...: their driver value
		dv, err := x.Value()
		if err != nil {
			return encoded{}, err
		}
		if _, again := dv.(driver.Valuer); again {
			return encoded{}, fmt.Errorf("bloomfilter: %T.Value returned a driver.Valuer", v)
		}
		return encode(dv, want, wantDetail)
	}
	return encodeReflect(v, want, wantDetail)
}

func encodeUint(x uint64) (encoded, error) {
	if x > math.MaxInt64 {
		return encoded{}, fmt.Errorf("bloomfilter: %d is out of the range of bigint", x)
	}
	return encoded{family: FamilyInteger, i64: int64(x)}, nil
}

// encodeReflect handles pointers and named types of basic kinds
// (type UserID int64, *string, ...).
func encodeReflect(v any, want Family, wantDetail uint32) (encoded, error) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer:
		if rv.IsNil() {
			return encoded{}, errNull
		}
		return encode(rv.Elem().Interface(), want, wantDetail)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return encoded{family: FamilyInteger, i64: rv.Int()}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return encodeUint(rv.Uint())
	case reflect.Float32, reflect.Float64:
		return encoded{family: FamilyFloat, bytes: canonicalFloat(rv.Float())}, nil
	case reflect.Bool:
		return encode(rv.Bool(), want, wantDetail)
	case reflect.String:
		return encode(rv.String(), want, wantDetail)
	case reflect.Slice:
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			return encode(rv.Bytes(), want, wantDetail)
		}
	}
	return encoded{}, fmt.Errorf("bloomfilter: cannot hash a value of Go type %T", v)
}

// encodeRecord builds the record encoding of §3.2: per field its family
// byte, u32 length (0xFFFFFFFF for NULL) and canonical bytes.
func encodeRecord(fields []any, wantDetail uint32) (encoded, error) {
	if len(fields) < 1 || len(fields) > maxRecordFields {
		return encoded{}, fmt.Errorf("bloomfilter: a record has 1 to %d fields, not %d",
			maxRecordFields, len(fields))
	}
	var buf []byte
	var detail uint32
	for i, fv := range fields {
		want := Family(wantDetail >> (4 * i) & 0xF)
		e, err := encode(fv, want, 0)
		null := err == errNull
		if err != nil && !null {
			return encoded{}, fmt.Errorf("record field %d: %w", i+1, err)
		}
		fam := e.family
		if null && fam == FamilyNone {
			fam = want
		}
		switch {
		case fam == FamilyRecord:
			return encoded{}, fmt.Errorf("bloomfilter: a record cannot contain another record (field %d)", i+1)
		case fam == FamilyNone:
			return encoded{}, fmt.Errorf("bloomfilter: record field %d is NULL and its family is unknown: use Null(family)", i+1)
		case fam > familyMax:
			return encoded{}, fmt.Errorf("bloomfilter: record field %d: unknown family %d", i+1, fam)
		}
		detail |= uint32(fam) << (4 * i)
		buf = append(buf, byte(fam))
		if null {
			buf = append(buf, 0xFF, 0xFF, 0xFF, 0xFF)
			continue
		}
		if fam == FamilyOther {
			return encoded{}, ErrNonPortable
		}
		b := e.bytes
		if fam == FamilyInteger {
			b = int64Bytes(e.i64)
		}
		buf = binary.LittleEndian.AppendUint32(buf, uint32(len(b)))
		buf = append(buf, b...)
	}
	return encoded{family: FamilyRecord, detail: detail, bytes: buf}, nil
}

// Hash returns the hash of v with the given seed, as the server's
// bf_hash(value, seed) computes it (as an unsigned 64-bit number), and
// v's family.  A NULL field of a record must be given as Null(family).
func Hash(v any, seed int64) (uint64, Family, error) {
	e, err := encode(v, FamilyNone, 0)
	if err != nil {
		if err == errNull {
			err = errors.New("bloomfilter: cannot hash NULL")
		}
		return 0, FamilyNone, err
	}
	return e.hash(seed), e.family, nil
}

// CanonicalBytes returns the bytes v is hashed from (FORMAT.md §3) and its
// family; for tests and for other implementations to compare with.
func CanonicalBytes(v any) ([]byte, Family, error) {
	e, err := encode(v, FamilyNone, 0)
	if err != nil {
		return nil, FamilyNone, err
	}
	if e.family == FamilyInteger {
		return int64Bytes(e.i64), e.family, nil
	}
	return e.bytes, e.family, nil
}
