package wire

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

// DecodeValue types an unannotated JSON value by its shape (PF, EVIDENCE.md 1.5): a string is
// Edm.String, true/false Edm.Boolean, an integer that fits 32 bits Edm.Int32, a number with a
// decimal point or exponent Edm.Double. An integer beyond 32 bits without annotation is
// stored by Storage and reads back equal, in a type the recordings do not show (EVIDENCE.md
// 14); conform reads it as Edm.Double, the OData fallback for numbers. null is a null of no
// type.
func DecodeValue(raw json.RawMessage) (api.Value, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return api.Value{}, spec.ErrInvalidInput.Newf("A property has no value.")
	}
	s, err := literalString(raw)
	if err != nil {
		return api.Value{}, err
	}
	return scalarOfShape(raw, s)
}

// literalString reads raw as a JSON string when it starts like one ("" otherwise), for the
// exported decoders, whose input no scan has validated.
func literalString(raw []byte) (string, error) {
	if raw[0] != '"' {
		return "", nil
	}
	if s, ok := singleString(raw); ok {
		return s, nil
	}
	var s string
	err := json.Unmarshal(raw, &s)
	if err == nil {
		err = errors.New("not one JSON string")
	}
	return "", badJSON(err)
}

// scalarOfShape is DecodeValue of a trimmed, non-empty value whose text, when it is a string
// literal, is s.
func scalarOfShape(raw []byte, s string) (api.Value, error) {
	switch raw[0] {
	case 'n':
		return api.Null(0), nil
	case 't', 'f':
		return api.Bool(raw[0] == 't'), nil
	case '"':
		return api.String(s), nil
	case '{', '[':
		return api.Value{}, spec.ErrInvalidInput.Newf("Objects and arrays are not property values.")
	}
	if !bytes.ContainsAny(raw, ".eE") {
		if i, err := strconv.ParseInt(string(raw), 10, 64); err == nil && i >= math.MinInt32 && i <= math.MaxInt32 {
			return api.Int32(int32(i)), nil
		}
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if errors.Is(err, strconv.ErrRange) && math.IsInf(f, 0) {
		return api.Value{}, spec.ErrInvalidInput.Newf(spec.MsgValueNotProcessed) // E-double-out-of-range
	}
	if err != nil {
		return api.Value{}, spec.ErrInvalidValueType.Newf("The number %s is not a valid Edm.Double.", raw)
	}
	return api.Double(f), nil
}

// scalarOfType reads a trimmed, non-empty value as a value of type t (an annotated
// property); s is its text when it is a string literal. null is a null of type t; objects
// and arrays are refused with 400 InvalidInput; the rest is the reader of t's (typeReaders).
// answer is true in an answer, whose DateTimes are read as AnswerDateTime reads them.
func scalarOfType(t api.EdmType, raw []byte, s string, answer bool) (api.Value, error) {
	if raw[0] == 'n' {
		return api.Null(t), nil
	}
	if raw[0] == '{' || raw[0] == '[' {
		return api.Value{}, spec.ErrInvalidInput.Newf("Objects and arrays are not property values.")
	}
	if t == api.EdmInt64 && raw[0] == '"' {
		// The type writes annotate most, as a string (readInt64), read without the reader's
		// call.
		if i, ok := shortInteger(s); ok {
			return api.Int64(i), nil
		}
	}
	if int(t) < len(typeReaders) && typeReaders[t] != nil {
		return typeReaders[t](typedRaw{t: t, raw: raw, text: s, isString: raw[0] == '"', answer: answer})
	}
	return typedRaw{t: t, raw: raw}.mismatch()
}

// typedRaw is one annotated JSON scalar (not null, not an object or array) as the type
// readers see it: raw is the JSON text, text the decoded string when isString.
type typedRaw struct {
	t        api.EdmType
	raw      []byte
	text     string
	isString bool
	answer   bool // the value is in an answer, not a request
}

// mismatch is the refusal of a value that is not a valid t: 400 InvalidValueType.
func (v typedRaw) mismatch() (api.Value, error) {
	return api.Value{}, spec.ErrInvalidValueType.Newf("The value %s is not a valid %s.", abbreviateRaw(v.raw), v.t)
}

// numberText is the text of a number sent bare or as a JSON string, which Storage accepts
// for Edm.Double (EVIDENCE.md 13, E-typed-string-values); ok is false when the text is not
// a JSON number.
func (v typedRaw) numberText() (string, bool) {
	var text string
	if v.isString {
		text = v.text
	} else {
		text = string(v.raw)
	}
	return text, isJSONNumber(text)
}

// typeReaders holds one reader per EDM type, indexed by api.EdmType.
var typeReaders = [...]func(typedRaw) (api.Value, error){
	api.EdmString:   readString,
	api.EdmBoolean:  readBoolean,
	api.EdmInt32:    readInt32,
	api.EdmInt64:    readInt64,
	api.EdmDouble:   readDouble,
	api.EdmDateTime: readDateTime,
	api.EdmGuid:     readGuid,
	api.EdmBinary:   readBinary,
}

// readString reads an Edm.String: a JSON string only.
func readString(v typedRaw) (api.Value, error) {
	if !v.isString {
		return v.mismatch()
	}
	return api.String(v.text), nil
}

// readBoolean reads an Edm.Boolean: true or false, bare or as a JSON string in any case
// ("False" is stored as false; EVIDENCE.md 13, E-typed-string-values).
func readBoolean(v typedRaw) (api.Value, error) {
	var text string
	if v.isString {
		text = v.text
	} else {
		text = string(v.raw)
	}
	switch {
	case strings.EqualFold(text, "true"):
		return api.Bool(true), nil
	case strings.EqualFold(text, "false"):
		return api.Bool(false), nil
	}
	return v.mismatch()
}

// integerText is the text of an integer sent bare or as a JSON string (Storage accepts both
// for Int32 and Int64; EVIDENCE.md 13, E-typed-string-values): an optional '-' and digits.
func (v typedRaw) integerText() (string, bool) {
	var text string
	if v.isString {
		text = v.text
	} else {
		text = string(v.raw)
	}
	digits := strings.TrimPrefix(text, "-")
	if digits == "" {
		return "", false
	}
	for i := 0; i < len(digits); i++ {
		if !isDigitByte(digits[i]) {
			return "", false
		}
	}
	return text, true
}

// shortInteger returns the value of text when it is an integer (an optional '-' and
// digits) of at most 18 digits, so that it fits in 63 bits: strconv.ParseInt's result,
// without its checks.
func shortInteger(text string) (int64, bool) {
	digits := text
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(digits); i++ {
		d := digits[i] - '0'
		if d > 9 {
			return 0, false
		}
		n = n*10 + int64(d)
	}
	if len(digits) < len(text) {
		n = -n
	}
	return n, true
}

// readInt32 reads an Edm.Int32: an integer in 32 bits, bare or as a JSON string.
func readInt32(v typedRaw) (api.Value, error) {
	text, ok := v.integerText()
	if !ok {
		return v.mismatch()
	}
	i, err := strconv.ParseInt(text, 10, 32)
	if err != nil {
		return v.mismatch()
	}
	return api.Int32(int32(i)), nil
}

// readInt64 reads an Edm.Int64: documented as a JSON string (EVIDENCE.md 1.5). A bare JSON
// integer with the annotation was never observed on the service (E-int64-number); conform
// accepts it. An integer beyond 64 bits is refused with 400 InvalidInput, as Storage
// answered (E-int64-overflow).
func readInt64(v typedRaw) (api.Value, error) {
	text, ok := v.integerText()
	if !ok {
		return v.mismatch()
	}
	if i, ok := shortInteger(text); ok {
		return api.Int64(i), nil
	}
	i, err := strconv.ParseInt(text, 10, 64)
	if errors.Is(err, strconv.ErrRange) {
		return api.Value{}, spec.ErrInvalidInput.Newf(spec.MsgValueNotProcessed)
	}
	if err != nil {
		return v.mismatch()
	}
	return api.Int64(i), nil
}

// readDouble reads an Edm.Double: a JSON number, bare or as a JSON string
// (E-typed-string-values), or one of the strings NaN, Infinity and -Infinity.
func readDouble(v typedRaw) (api.Value, error) {
	if v.isString {
		switch v.text {
		case "NaN":
			return api.Double(math.NaN()), nil
		case "Infinity":
			return api.Double(math.Inf(1)), nil
		case "-Infinity":
			return api.Double(math.Inf(-1)), nil
		}
	}
	text, ok := v.numberText()
	if !ok {
		return v.mismatch()
	}
	f, err := strconv.ParseFloat(text, 64)
	if errors.Is(err, strconv.ErrRange) && math.IsInf(f, 0) {
		// Storage: 400 InvalidInput (EVIDENCE.md 13, E-double-out-of-range).
		return api.Value{}, spec.ErrInvalidInput.Newf(spec.MsgValueNotProcessed)
	}
	if err != nil {
		return v.mismatch()
	}
	return api.Double(f), nil
}

// readDateTime reads an Edm.DateTime: a JSON string in the forms of EntityDateTime.
func readDateTime(v typedRaw) (api.Value, error) {
	if !v.isString {
		return v.mismatch()
	}
	if v.text == "" && !v.answer {
		// As Azurite answers, after Microsoft's fix of its issue 1757 (E-datetime-empty).
		return api.Value{}, spec.ErrInvalidInput.Newf(spec.MsgValueNotProcessed)
	}
	parse := EntityDateTime
	if v.answer {
		parse = AnswerDateTime
	}
	tm, err := parse(v.text)
	if err != nil {
		return api.Value{}, err
	}
	return api.DateTime(tm), nil
}

// readGuid reads an Edm.Guid: a JSON string in the 8-4-4-4-12 form.
func readGuid(v typedRaw) (api.Value, error) {
	if !v.isString {
		return v.mismatch()
	}
	g, ok := api.CanonicalGuid(v.text)
	if !ok {
		return v.mismatch()
	}
	return api.Guid(g), nil
}

// readBinary reads an Edm.Binary: a JSON string in padded base64.
func readBinary(v typedRaw) (api.Value, error) {
	if !v.isString {
		return v.mismatch()
	}
	b, err := base64.StdEncoding.Strict().DecodeString(v.text)
	if err != nil {
		return v.mismatch()
	}
	return api.Binary(b), nil
}

// isJSONNumber reports whether s is a number in JSON's grammar (RFC 8259 section 6): no
// sign but '-', no leading zeros, no hex, no spaces.
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && isDigitByte(s[i]) {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i == len(s) || !isDigitByte(s[i]) {
			return false
		}
		for i < len(s) && isDigitByte(s[i]) {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i == len(s) || !isDigitByte(s[i]) {
			return false
		}
		for i < len(s) && isDigitByte(s[i]) {
			i++
		}
	}
	return i == len(s)
}

func isDigitByte(c byte) bool { return c >= '0' && c <= '9' }

func abbreviateRaw(raw []byte) string {
	if len(raw) > 40 {
		return string(raw[:40]) + "..."
	}
	return string(raw)
}

// EntityDateTime reads an Edm.DateTime property value. Besides the forms of ParseDateTime
// it takes what Storage accepts in entity bodies: a time without a zone designator is UTC
// (EVIDENCE.md 13, E-datetime-no-zone), and fractional digits beyond the seventh are cut,
// so the value keeps 100 ns ticks (E-datetime-extra-digits). Header, SAS and ACL times stay
// with ParseDateTime.
func EntityDateTime(s string) (time.Time, error) {
	return ParseDateTime(lenientDateTimeText(s))
}

// AnswerDateTime reads an Edm.DateTime as a backend may send it in an answer: as
// EntityDateTime does, and also outside 1601..9999 (the service returns dates before 1601
// it stored). Whether such a value breaks a rule is for the spec of that rule to say, with
// the value as evidence; the client never turns it into a 400 the backend did not send.
func AnswerDateTime(s string) (time.Time, error) {
	t, ok := api.ParseDateTime(lenientDateTimeText(s))
	if !ok {
		return time.Time{}, spec.ErrInvalidValueType.Newf("The value '%s' is not a valid Edm.DateTime.", abbreviateRaw([]byte(s)))
	}
	return t, nil
}

// lenientDateTimeText rewrites s, a date and time of day, into ParseDateTime's form: the
// fraction cut to seven digits and a missing zone written as Z. Anything else is returned
// as it is, for ParseDateTime to judge.
func lenientDateTimeText(s string) string {
	const secondsEnd = len("2006-01-02T15:04:05")
	const minutesEnd = len("2006-01-02T15:04")
	if len(s) < minutesEnd || s[10] != 'T' {
		return s
	}
	end := minutesEnd
	if len(s) > minutesEnd && s[minutesEnd] == ':' {
		end = secondsEnd
		if len(s) > secondsEnd && s[secondsEnd] == '.' {
			digits := secondsEnd + 1
			for digits < len(s) && isDigitByte(s[digits]) {
				digits++
			}
			end = digits
			if digits-(secondsEnd+1) > 7 {
				s = s[:secondsEnd+8] + s[digits:]
				end = secondsEnd + 8
			}
		}
	}
	if end == len(s) {
		return s + "Z"
	}
	return s
}

// ParseDateTime reads an Edm.DateTime in the forms the service accepts (api.ParseDateTime;
// DTF) and returns it in UTC. A malformed value fails with 400 InvalidValueType; one outside
// 1601-01-01..9999-12-31 (UTC) with 400 OutOfRangeInput.
func ParseDateTime(s string) (time.Time, error) {
	t, ok := api.ParseDateTime(s)
	if !ok {
		return time.Time{}, spec.ErrInvalidValueType.Newf("The value '%s' is not a valid Edm.DateTime.", abbreviateRaw([]byte(s)))
	}
	if t.Before(spec.MinDateTime) || t.After(spec.MaxDateTime) {
		return time.Time{}, spec.ErrOutOfRangeInput.Newf("The value '%s' is outside the range of Edm.DateTime (1601-01-01 to 9999-12-31).", s)
	}
	return t, nil
}
