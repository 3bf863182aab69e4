// ValueFromText: a key given as an SQL type name and PostgreSQL's text
// output of the value (as psql prints it, or as the conformance file
// stores it), mapped to the Go value that hashes like it.

package bloomfilter

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// FamilyOfType returns the family of a built-in SQL type name ("int4",
// "integer", "varchar", "timestamptz", ...); ok is false for other types
// (enums and composite types have no fixed name).
func FamilyOfType(sqlType string) (Family, bool) {
	switch strings.ToLower(sqlType) {
	case "int2", "int4", "int8", "smallint", "integer", "int", "bigint":
		return FamilyInteger, true
	case "float4", "float8", "real", "double precision":
		return FamilyFloat, true
	case "numeric", "decimal":
		return FamilyNumeric, true
	case "text", "varchar", "character varying", "name", "bpchar", "character", "char", "unknown":
		return FamilyText, true
	case "bytea":
		return FamilyBytea, true
	case "uuid":
		return FamilyUUID, true
	case "bool", "boolean":
		return FamilyBoolean, true
	case "date":
		return FamilyDate, true
	case "timestamp", "timestamp without time zone":
		return FamilyTimestamp, true
	case "timestamptz", "timestamp with time zone":
		return FamilyTimestampTZ, true
	case "enum":
		return FamilyEnum, true
	case "record":
		return FamilyRecord, true
	}
	return FamilyNone, false
}

// ValueFromText converts PostgreSQL's text output of a value of a
// built-in type (DateStyle ISO, bytea_output hex) to the Go value that
// hashes as it: int16/int32/int64, float32/float64, Numeric, string,
// Bpchar, []byte, UUID, bool, Date, Timestamp, TimestampTZ.  The type
// "enum" gives an Enum.
func ValueFromText(sqlType, text string) (any, error) {
	bad := func(err error) (any, error) {
		return nil, fmt.Errorf("bloomfilter: %s value %s: %v", sqlType, quoteShort(text), err)
	}
	switch strings.ToLower(sqlType) {
	case "int2", "smallint":
		v, err := strconv.ParseInt(text, 10, 16)
		if err != nil {
			return bad(err)
		}
		return int16(v), nil
	case "int4", "integer", "int":
		v, err := strconv.ParseInt(text, 10, 32)
		if err != nil {
			return bad(err)
		}
		return int32(v), nil
	case "int8", "bigint":
		v, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return bad(err)
		}
		return v, nil
	case "float4", "real":
		v, err := strconv.ParseFloat(text, 32)
		if err != nil {
			return bad(err)
		}
		return float32(v), nil
	case "float8", "double precision":
		v, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return bad(err)
		}
		return v, nil
	case "numeric", "decimal":
		return Numeric(text), nil
	case "bpchar", "character", "char":
		return Bpchar(text), nil
	case "text", "varchar", "character varying", "name", "unknown":
		return text, nil
	case "enum":
		return Enum(text), nil
	case "bytea":
		if !strings.HasPrefix(text, `\x`) {
			return bad(fmt.Errorf(`expected hex output \x...`))
		}
		b, err := hex.DecodeString(text[2:])
		if err != nil {
			return bad(err)
		}
		return b, nil
	case "uuid":
		u, err := ParseUUID(text)
		if err != nil {
			return bad(err)
		}
		return u, nil
	case "bool", "boolean":
		switch strings.ToLower(text) {
		case "t", "true":
			return true, nil
		case "f", "false":
			return false, nil
		}
		return bad(fmt.Errorf("not a boolean"))
	case "date":
		switch text {
		case "infinity":
			return DateInfinity, nil
		case "-infinity":
			return DateNegInfinity, nil
		}
		t, err := parseISOTime(text, false, false)
		if err != nil {
			return bad(err)
		}
		return DateOf(t), nil
	case "timestamp", "timestamp without time zone":
		switch text {
		case "infinity":
			return TimestampInfinity, nil
		case "-infinity":
			return TimestampNegInfinity, nil
		}
		t, err := parseISOTime(text, true, false)
		if err != nil {
			return bad(err)
		}
		return TimestampOf(t), nil
	case "timestamptz", "timestamp with time zone":
		switch text {
		case "infinity":
			return TimestampTZInfinity, nil
		case "-infinity":
			return TimestampTZNegInfinity, nil
		}
		t, err := parseISOTime(text, true, true)
		if err != nil {
			return bad(err)
		}
		return TimestampTZOf(t), nil
	}
	return nil, fmt.Errorf("bloomfilter: no Go mapping for SQL type %q", sqlType)
}

// parseISOTime reads "Y-MM-DD[ HH:MM:SS[.ffffff][±HH[:MM[:SS]]]][ BC]"
// with a year of 4 or more digits (BC years counted astronomically).
func parseISOTime(s string, withTime, withZone bool) (time.Time, error) {
	bc := strings.HasSuffix(s, " BC")
	s = strings.TrimSuffix(s, " BC")
	datePart, timePart, hasTime := strings.Cut(s, " ")
	if hasTime != withTime {
		return time.Time{}, fmt.Errorf("unexpected form")
	}
	ymd := strings.Split(datePart, "-")
	if len(ymd) != 3 {
		return time.Time{}, fmt.Errorf("bad date")
	}
	var n [3]int
	for i, p := range ymd {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 {
			return time.Time{}, fmt.Errorf("bad date")
		}
		n[i] = v
	}
	year := n[0]
	if bc {
		year = 1 - year
	}
	var h, mi, sec, ns int
	loc := time.UTC
	if withTime {
		clock := timePart
		if withZone {
			i := strings.LastIndexAny(timePart, "+-")
			if i < 0 {
				return time.Time{}, fmt.Errorf("missing UTC offset")
			}
			clock = timePart[:i]
			off := 0
			for j, p := range strings.Split(timePart[i+1:], ":") {
				v, err := strconv.Atoi(p)
				if err != nil || j > 2 {
					return time.Time{}, fmt.Errorf("bad UTC offset")
				}
				off += v * []int{3600, 60, 1}[j]
			}
			if timePart[i] == '-' {
				off = -off
			}
			loc = time.FixedZone("", off)
		}
		hms, frac, _ := strings.Cut(clock, ".")
		parts := strings.Split(hms, ":")
		if len(parts) != 3 {
			return time.Time{}, fmt.Errorf("bad time")
		}
		var err1, err2, err3 error
		h, err1 = strconv.Atoi(parts[0])
		mi, err2 = strconv.Atoi(parts[1])
		sec, err3 = strconv.Atoi(parts[2])
		if err1 != nil || err2 != nil || err3 != nil {
			return time.Time{}, fmt.Errorf("bad time")
		}
		if frac != "" {
			if len(frac) > 9 || strings.Trim(frac, "0123456789") != "" {
				return time.Time{}, fmt.Errorf("bad fraction")
			}
			ns, _ = strconv.Atoi((frac + "000000000")[:9])
		}
	}
	return time.Date(year, time.Month(n[1]), n[2], h, mi, sec, ns, loc), nil
}
