// parseCDouble: the text form's fpr is read by the server with C's strtod,
// accepted only when the whole token is consumed and errno stays 0.  This
// reproduces that on top of strconv, so that the client accepts exactly
// the same tokens (hex floats, leading tabs, "1." and ".5" included; a
// result that underflows inexactly to a subnormal or zero rejected).

package bloomfilter

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// digitsRun returns the length of the run of digits (hex if hex) at s[i:].
func digitsRun(s string, i int, hex bool) int {
	j := i
	for j < len(s) && (isDigit(s[j]) || hex && isHex(s[j])) {
		j++
	}
	return j - i
}

func parseCDouble(s string) (float64, bool) {
	// C isspace() in the C locale; ' ' cannot occur inside a token
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	body := s
	neg := false
	if body != "" && (body[0] == '+' || body[0] == '-') {
		neg = body[0] == '-'
		body = body[1:]
	}
	lower := strings.ToLower(body)
	if strings.HasPrefix(lower, "inf") || strings.HasPrefix(lower, "nan") {
		return 0, false // never a valid rate, whatever follows
	}
	hex := len(lower) > 2 && lower[0] == '0' && lower[1] == 'x' &&
		(isHex(lower[2]) || lower[2] == '.' && len(lower) > 3 && isHex(lower[3]))
	i := 0
	if hex {
		i = 2
	}
	intDigits := digitsRun(body, i, hex)
	i += intDigits
	fracDigits := 0
	if i < len(body) && body[i] == '.' {
		fracDigits = digitsRun(body, i+1, hex)
		i += 1 + fracDigits
	}
	if intDigits+fracDigits == 0 {
		return 0, false
	}
	mantEnd := i
	expChar := byte('e')
	if hex {
		expChar = 'p'
	}
	if i < len(body) && (body[i]|0x20) == expChar {
		j := i + 1
		if j < len(body) && (body[j] == '+' || body[j] == '-') {
			j++
		}
		if n := digitsRun(body, j, false); n > 0 {
			i = j + n
		}
	}
	if i != len(body) {
		return 0, false // strtod would stop early: trailing characters
	}
	norm := body
	if hex && mantEnd == len(body) {
		norm += "p0" // Go wants the exponent C makes optional
	}
	v, err := strconv.ParseFloat(norm, 64)
	if err != nil {
		return 0, false // overflow (ERANGE); never below 1 anyway
	}
	if neg {
		v = -v
	}
	if math.Abs(v) < 0x1p-1022 && !mantissaZero(body[:mantEnd]) {
		// glibc sets ERANGE when the result is tiny and inexact
		if v == 0 || !exactFloat(norm, math.Abs(v)) {
			return 0, false
		}
	}
	return v, true
}

func mantissaZero(m string) bool {
	if strings.HasPrefix(m, "0x") || strings.HasPrefix(m, "0X") {
		m = m[2:]
	}
	return strings.Trim(m, "0.") == ""
}

// exactFloat reports whether the decimal or hex number s equals v exactly.
func exactFloat(s string, v float64) bool {
	exp := "eE"
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		exp = "pP"
	}
	// an absurd exponent cannot give an exact subnormal: do not build it
	if e := strings.LastIndexAny(s, exp); e >= 0 {
		if n, err := strconv.Atoi(s[e+1:]); err != nil || n > 100000 || n < -100000 {
			return false
		}
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return false
	}
	return r.Cmp(new(big.Rat).SetFloat64(v)) == 0
}
