package wire

// The value oracle: the EDM text forms as the evidence states them (EVIDENCE.md 1.5: DTF for
// Edm.DateTime, the 8-4-4-4-12 form of Edm.Guid; RFC 8259 for JSON strings), written
// without the shipped conversions (api.ParseDateTime, api.CanonicalGuid, FormatDouble,
// appendString) that the oracle tests check.

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

// oracleEDMForm is how an annotated value of one EDM type may be written in an entity's
// JSON (EVIDENCE.md 1.5, PF): bare (a JSON number or true/false, given as its text) or
// quoted (a JSON string, given unquoted). A nil reader: the form is not allowed. A reader
// fails with the service's error for text that is not of the type.
type oracleEDMForm struct {
	bare, quoted func(text string) (api.Value, error)
}

var oracleEDMForms = map[api.EdmType]oracleEDMForm{
	api.EdmString:  {quoted: func(s string) (api.Value, error) { return api.String(s), nil }},
	api.EdmBoolean: {bare: oracleBoolean, quoted: func(s string) (api.Value, error) { return oracleBoolean(strings.ToLower(s)) }},
	api.EdmInt32:   {bare: oracleInteger(32), quoted: oracleInteger(32)},
	api.EdmInt64:   {bare: oracleInteger(64), quoted: oracleInteger(64)},
	api.EdmDouble:  {bare: oracleDouble, quoted: oracleDoubleQuoted},
	api.EdmDateTime: {quoted: func(s string) (api.Value, error) {
		if s == "" {
			return api.Value{}, spec.ErrInvalidInput.New() // E-datetime-empty
		}
		t, err := oracleDateTime(s, oracleEntityDateTime)
		return api.DateTime(t), err
	}},
	api.EdmGuid:   {quoted: oracleGuidValue},
	api.EdmBinary: {quoted: oracleBase64},
}

func oracleNotOfType() (api.Value, error) { return api.Value{}, spec.ErrInvalidValueType.New() }

func oracleBoolean(text string) (api.Value, error) {
	switch text {
	case "true", "false":
		return api.Bool(text == "true"), nil
	}
	return oracleNotOfType()
}

var oracleIntegerText = regexp.MustCompile(`^-?[0-9]+$`)

// oracleInteger reads a decimal integer of the given width.
func oracleInteger(bits int) func(string) (api.Value, error) {
	return func(text string) (api.Value, error) {
		if !oracleIntegerText.MatchString(text) {
			return oracleNotOfType()
		}
		i, err := strconv.ParseInt(text, 10, bits)
		switch {
		case err != nil && bits == 64:
			return api.Value{}, spec.ErrInvalidInput.New() // beyond Int64 (E-typed-string-values)
		case err != nil:
			return oracleNotOfType()
		case bits == 32:
			return api.Int32(int32(i)), nil
		}
		return api.Int64(i), nil
	}
}

// oracleDouble reads a JSON number as a Double; one beyond its range is 400 InvalidInput
// (E-double-out-of-range).
func oracleDouble(text string) (api.Value, error) {
	f, err := strconv.ParseFloat(text, 64)
	if math.IsInf(f, 0) {
		return api.Value{}, spec.ErrInvalidInput.New()
	}
	if err != nil {
		return oracleNotOfType()
	}
	return api.Double(f), nil
}

// oracleDoubleWords are the three Doubles JSON has no number for, written as strings.
var oracleDoubleWords = map[string]float64{"NaN": math.NaN(), "Infinity": math.Inf(1), "-Infinity": math.Inf(-1)}

func oracleDoubleWord(s string) (api.Value, error) {
	if f, ok := oracleDoubleWords[s]; ok {
		return api.Double(f), nil
	}
	return oracleNotOfType()
}

// oracleDoubleQuoted reads a Double sent as a JSON string: one of the words, or exactly the
// text of a JSON number (E-typed-string-values).
func oracleDoubleQuoted(s string) (api.Value, error) {
	if _, ok := oracleDoubleWords[s]; ok || !json.Valid([]byte(s)) || strings.ContainsAny(s, "\"{[tfn \t\r\n") {
		return oracleDoubleWord(s)
	}
	return oracleDouble(s)
}

func oracleGuidValue(s string) (api.Value, error) {
	g, ok := oracleGuid(s)
	if !ok {
		return oracleNotOfType()
	}
	return api.Guid(g), nil
}

// oracleBase64 reads Edm.Binary: standard base64 with padding.
func oracleBase64(s string) (api.Value, error) {
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil {
		return oracleNotOfType()
	}
	return api.Binary(b), nil
}

// oracleDateTimeLeniency lists the forms beyond DTF that an entity's Edm.DateTime value may
// take. Each is a fact of its own from real traffic; the zero value is DTF alone.
type oracleDateTimeLeniency struct {
	// zoneless: a date and time of day without a zone is UTC (E-datetime-no-zone).
	zoneless bool
	// longFraction: a fraction of more than 7 digits is cut to 7, 100 ns
	// (E-datetime-extra-digits).
	longFraction bool
	// anyYear: a date outside 1601..9999 is read (answers only: the client reads what a
	// backend sent and lets the rule judge it).
	anyYear bool
}

// oracleEntityDateTime is what entity values accept: both leniencies.
var oracleEntityDateTime = oracleDateTimeLeniency{zoneless: true, longFraction: true}

// oracleAnswerDateTime is what a DateTime in an answer may be.
var oracleAnswerDateTime = oracleDateTimeLeniency{zoneless: true, longFraction: true, anyYear: true}

// oracleDateTimeText is DTF: YYYY-MM-DD, or YYYY-MM-DDThh:mm with optional :ss and an
// optional fraction, then Z or ±hh:mm.
var oracleDateTimeText = regexp.MustCompile(`^([0-9]{4})-([0-9]{2})-([0-9]{2})(?:T([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.([0-9]+))?)?(Z|[+-][0-9]{2}:[0-9]{2})?)?$`)

// oracleDateTime reads s as an Edm.DateTime: 400 InvalidValueType when it is not in the
// forms, 400 OutOfRangeInput outside 1601-01-01T00:00:00Z .. 9999-12-31T23:59:59.9999999Z.
func oracleDateTime(s string, lenient oracleDateTimeLeniency) (time.Time, error) {
	bad := func() (time.Time, error) { return time.Time{}, spec.ErrInvalidValueType.New() }
	m := oracleDateTimeText.FindStringSubmatch(s)
	if m == nil {
		return bad()
	}
	n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
	year, month, day := n(1), n(2), n(3)
	hour, minute, second, nanos, offset := 0, 0, 0, 0, 0
	if m[4] != "" {
		hour, minute = n(4), n(5)
		if m[6] != "" {
			second = n(6)
		}
		if frac := m[7]; frac != "" {
			if len(frac) > 7 && !lenient.longFraction {
				return bad()
			}
			frac = (frac + "000000000")[:9]
			frac = frac[:7] + "00" // 100 ns is the finest unit
			nanos, _ = strconv.Atoi(frac)
		}
		switch zone := m[8]; {
		case zone == "" && !lenient.zoneless:
			return bad()
		case zone == "", zone == "Z":
		default:
			h, _ := strconv.Atoi(zone[1:3])
			mm, _ := strconv.Atoi(zone[4:6])
			if h > 23 || mm > 59 {
				return bad()
			}
			offset = h*3600 + mm*60
			if zone[0] == '-' {
				offset = -offset
			}
		}
	}
	if hour > 23 || minute > 59 || second > 59 || month < 1 || month > 12 || day < 1 {
		return bad()
	}
	t := time.Date(year, time.Month(month), day, hour, minute, second, nanos, time.FixedZone("", offset))
	if t.Day() != day { // 31 April, 29 February of a common year
		return bad()
	}
	t = t.UTC()
	if !lenient.anyYear && t.Before(time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC)) || !lenient.anyYear && t.After(time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC)) {
		return time.Time{}, spec.ErrOutOfRangeInput.New()
	}
	return t, nil
}

var oracleGuidText = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// oracleGuid reads s as an Edm.Guid in the 8-4-4-4-12 form, in any case, and gives it in
// lower case.
func oracleGuid(s string) (string, bool) {
	if !oracleGuidText.MatchString(s) {
		return "", false
	}
	return strings.ToLower(s), true
}

// oracleDoubleTextOK says text is an acceptable JSON form of the Edm.Double f: it reads back
// as exactly f, and it reads as a Double, not an integer (a '.' or an exponent).
func oracleDoubleTextOK(text string, f float64) bool {
	g, err := strconv.ParseFloat(text, 64)
	return err == nil && g == f && strings.ContainsAny(text, ".eE") && json.Valid([]byte(text))
}

// oracleJSONStringOK says out is s as one JSON string (RFC 8259): valid JSON that reads
// back as s with each byte of invalid UTF-8 as U+FFFD, holding no raw control character and
// no raw U+2028 or U+2029 (which JavaScript reads as line ends).
func oracleJSONStringOK(out []byte, s string) bool {
	var want strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		want.WriteRune(r) // RuneError for each invalid byte
		i += size
	}
	var got string
	if err := json.Unmarshal(out, &got); err != nil || got != want.String() {
		return false
	}
	for _, r := range string(out) {
		if r < 0x20 || r == '\u2028' || r == '\u2029' {
			return false
		}
	}
	return true
}
