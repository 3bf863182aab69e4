// Errors of the client.  A malformed value is a *FormatError carrying the
// SQLSTATE the server raises for the same input, so that tests can check
// that the client rejects exactly what the server rejects.

package bloomfilter

import (
	"errors"
	"fmt"
)

// SQLSTATEs of the server's rejections of a malformed value.
const (
	SQLStateInvalidText   = "22P02" // invalid_text_representation
	SQLStateInvalidBinary = "22P03" // invalid_binary_representation
)

// FormatError reports bytes or text that are not a valid filter.
type FormatError struct {
	SQLState string // the server's SQLSTATE for the same input
	Msg      string
}

func (e *FormatError) Error() string { return "bloomfilter: invalid value: " + e.Msg }

func binaryError(format string, args ...any) error {
	return &FormatError{SQLStateInvalidBinary, fmt.Sprintf(format, args...)}
}

func textError(format string, args ...any) error {
	return &FormatError{SQLStateInvalidText, fmt.Sprintf(format, args...)}
}

// ErrNonPortable is returned when a filter's hashes depend on PostgreSQL
// internals (family other, or a record with a field of family other):
// only the server can compute them.
var ErrNonPortable = errors.New("bloomfilter: the filter is not portable: " +
	"it holds values of a type whose hash only PostgreSQL can compute (family other)")

// ErrReadOnly is returned by Add on a filter shared by a Refresher.
var ErrReadOnly = errors.New("bloomfilter: the filter is a shared read-only snapshot; Clone it to modify")

// FamilyError reports a value of another family than the filter's.
type FamilyError struct {
	Filter, Value Family
	// for records: the field families, as in the header's detail field
	FilterDetail, ValueDetail uint32
}

func (e *FamilyError) Error() string {
	return fmt.Sprintf("bloomfilter: a value of family %s cannot be used with a filter of family %s",
		familyText(e.Value, e.ValueDetail, "?"), familyText(e.Filter, e.FilterDetail, "?"))
}

// IncompatibleError reports filters that cannot be combined (§6.4): the
// first parameter that differs.
type IncompatibleError struct {
	Param string // "nbits", "nhashes", "seed", "family"
}

func (e *IncompatibleError) Error() string {
	return "bloomfilter: filters are not compatible: they differ in " + e.Param
}

// asTextError turns the *FormatError of bytes rebuilt from a text form into
// the text form's error (SQLSTATE 22P02), as the server's input function
// reports it; other errors pass through.
func asTextError(err error) error {
	var fe *FormatError
	if errors.As(err, &fe) {
		return textError("%s", fe.Msg)
	}
	return err
}
