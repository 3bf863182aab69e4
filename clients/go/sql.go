// database/sql integration: a *Filter can be the destination of Scan
// (lib/pq and pgx, text or binary results, a bloomfilter column or its
// ::bytea) and a query argument (its text form, for a bloomfilter
// parameter).

package bloomfilter

import (
	"bytes"
	"database/sql/driver"
	"encoding/hex"
	"fmt"
)

// Scan implements sql.Scanner.  It accepts the bytes of the format
// (bytea, binary results), the text form, and bytea's hex text ("\x…",
// as drivers that do not decode bytea give it), of a plain filter, a
// growing one or a union alike.  Scanning NULL is an
// error; scan into a **Filter (or sql.Null[...] wrapper) to allow NULL.
func (f *Filter) Scan(src any) error {
	var g *Filter
	var err error
	switch x := src.(type) {
	case []byte:
		g, err = parseAny(x)
	case string:
		g, err = parseAny([]byte(x))
	case nil:
		return fmt.Errorf("bloomfilter: cannot scan NULL into a Filter")
	default:
		return fmt.Errorf("bloomfilter: cannot scan %T into a Filter", src)
	}
	if err != nil {
		return err
	}
	*f = *g
	return nil
}

// parseAny tells the three representations apart by their first bytes:
// "BLMF", "BLMG" or "BLMU" (binary), "bloomfilter:1", "bloomgrowing:1" or
// "bloomunion:1" (text), "\x" (bytea hex text).
func parseAny(b []byte) (*Filter, error) {
	switch {
	case bytes.HasPrefix(b, []byte(textPrefix)), bytes.HasPrefix(b, []byte(growTextPrefix)),
		bytes.HasPrefix(b, []byte(unionTextPrefix)):
		return ParseText(string(b))
	case bytes.HasPrefix(b, []byte(`\x`)):
		raw, err := decodeHexText(b)
		if err != nil {
			return nil, err
		}
		return parseOwned(raw)
	}
	return Parse(b)
}

// decodeHexText decodes bytea's hex text ("\x…").
func decodeHexText(b []byte) ([]byte, error) {
	raw := make([]byte, hex.DecodedLen(len(b)-2))
	if _, err := hex.Decode(raw, b[2:]); err != nil {
		return nil, binaryError("bad bytea hex text: %v", err)
	}
	return raw, nil
}

// Value implements driver.Valuer: the text form, which a bloomfilter
// parameter accepts from either driver.  (For a bytea parameter pass
// f.Bytes().)
func (f *Filter) Value() (driver.Value, error) {
	return f.String(), nil
}
