// Element families (docs/FORMAT.md §3): which SQL types a filter holds,
// and so how a value is encoded before it is hashed.

package bloomfilter

import (
	"fmt"
	"strings"
)

// Family is the element family of a filter (byte 8 of the header).
type Family uint8

// The families of format version 1.
const (
	FamilyNone        Family = 0 // nothing added yet
	FamilyInteger     Family = 1 // int2, int4, int8
	FamilyFloat       Family = 2 // float4, float8
	FamilyNumeric     Family = 3
	FamilyText        Family = 4 // text, varchar, name, bpchar
	FamilyBytea       Family = 5
	FamilyUUID        Family = 6
	FamilyBoolean     Family = 7
	FamilyDate        Family = 8
	FamilyTimestamp   Family = 9
	FamilyTimestampTZ Family = 10
	FamilyEnum        Family = 11
	FamilyRecord      Family = 12 // composite keys
	FamilyOther       Family = 13 // not portable
	familyMax                = FamilyOther
)

var familyNames = [...]string{"none", "integer", "float", "numeric", "text",
	"bytea", "uuid", "boolean", "date", "timestamp", "timestamptz", "enum",
	"record", "other"}

// String returns the family's name as the text form spells it.
func (f Family) String() string {
	if f <= familyMax {
		return familyNames[f]
	}
	return fmt.Sprintf("family(%d)", uint8(f))
}

func familyFromName(s string) (Family, bool) {
	for i, n := range familyNames {
		if n == s {
			return Family(i), true
		}
	}
	return 0, false
}

// portableTypeOIDs are the OIDs PostgreSQL fixes for the types of a
// portable family (and unknown, hashed as text): a filter of family other
// never names one of them in its family detail (docs/FORMAT.md §3.1), and
// the server refuses a value that does.
var portableTypeOIDs = map[uint32]string{
	16: "bool", 17: "bytea", 19: "name", 20: "int8", 21: "int2", 23: "int4",
	25: "text", 700: "float4", 701: "float8", 705: "unknown", 1042: "bpchar",
	1043: "varchar", 1082: "date", 1114: "timestamp", 1184: "timestamptz",
	1700: "numeric", 2950: "uuid",
}

// maxRecordFields is the most fields a composite key may have.
const maxRecordFields = 8

// recordFields decodes the family detail of a record filter: one 4-bit
// family per field, field 1 in the lowest nibble.
func recordFields(detail uint32) []Family {
	var fs []Family
	for i := 0; i < maxRecordFields; i++ {
		f := Family(detail >> (4 * i) & 0xF)
		if f == 0 {
			break
		}
		fs = append(fs, f)
	}
	return fs
}

// recordDetailValid: 1 to 8 nibbles from the low end, each a field
// family (not none, not record, not above other), no gap.
func recordDetailValid(detail uint32) bool {
	ended := false
	n := 0
	for i := 0; i < maxRecordFields; i++ {
		f := Family(detail >> (4 * i) & 0xF)
		switch {
		case f == 0:
			ended = true
		case ended || f > familyMax || f == FamilyRecord:
			return false
		default:
			n++
		}
	}
	return n > 0
}

func recordHasOther(detail uint32) bool {
	for i := 0; i < maxRecordFields; i++ {
		if Family(detail>>(4*i)&0xF) == FamilyOther {
			return true
		}
	}
	return false
}

// familyText is the family as the text form prints it, e.g.
// "record(integer,text)"; typeName names the type of family other.
func familyText(f Family, detail uint32, typeName string) string {
	switch f {
	case FamilyRecord:
		var names []string
		for _, ff := range recordFields(detail) {
			names = append(names, ff.String())
		}
		return "record(" + strings.Join(names, ",") + ")"
	case FamilyOther:
		return "other(" + typeName + ")"
	}
	return f.String()
}
