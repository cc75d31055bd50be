package wire

// The decoder as it was before the single-pass scanner, kept as an oracle: the fuzz target
// FuzzDecodeMatchesOracle checks that both accept the same documents, decode the same
// entities and refuse the rest with the same error codes.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

// oracleMember is one name/value pair of a JSON object, in document order.
type oracleMember struct {
	name string
	raw  json.RawMessage
}

// oracleReadObject reads one JSON object, refusing duplicate names with 400
// DuplicatePropertiesSpecified (TERR) and anything that is not one object with 400
// InvalidInput.
func oracleReadObject(data []byte) ([]oracleMember, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, badJSON(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, spec.ErrInvalidInput.Newf("The request body must be a JSON object.")
	}
	var ms []oracleMember
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, badJSON(err)
		}
		name, ok := tok.(string)
		if !ok {
			return nil, spec.ErrInvalidInput.Newf("A JSON object oracleMember name is not a string.")
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, badJSON(err)
		}
		if seen[name] {
			return nil, spec.ErrDuplicateProperties.New()
		}
		seen[name] = true
		ms = append(ms, oracleMember{name, raw})
	}
	if _, err := dec.Token(); err != nil {
		return nil, badJSON(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, spec.ErrInvalidInput.Newf("Unexpected data after the JSON object.")
	}
	return ms, nil
}

// DecodeEntity decodes an entity from an answer (Get Entity, Insert Entity with
// return-content, a batch retrieve): the keys, Timestamp, odata.etag and every custom
// property typed by its annotation or, unannotated, by its JSON shape (see DecodeValue).
// System properties the object lacks are flagged in Absent.
func oracleDecodeEntity(data []byte) (api.Entity, error) {
	ms, err := oracleReadObject(data)
	if err != nil {
		return api.Entity{}, err
	}
	return oracleEntityFromMembers(ms, false)
}

// DecodeRequestEntity decodes an entity from a request body. It differs from DecodeEntity
// only in that a client-supplied Timestamp is ignored, as the service ignores it (DM).
func oracleDecodeRequestEntity(data []byte) (api.Entity, error) {
	ms, err := oracleReadObject(data)
	if err != nil {
		return api.Entity{}, err
	}
	return oracleEntityFromMembers(ms, true)
}

// DecodeEntitySet decodes the `value` array of a Query Entities answer.
func oracleDecodeEntitySet(data []byte) ([]api.Entity, error) {
	items, err := oracleValueArray(data)
	if err != nil {
		return nil, err
	}
	out := make([]api.Entity, 0, len(items))
	for i, raw := range items {
		ms, err := oracleReadObject(raw)
		if err != nil {
			return nil, oracleWrapIndex(err, i)
		}
		e, err := oracleEntityFromMembers(ms, false)
		if err != nil {
			return nil, oracleWrapIndex(err, i)
		}
		out = append(out, e)
	}
	return out, nil
}

func oracleWrapIndex(err error, i int) error {
	var se *spec.Error
	if errors.As(err, &se) {
		c := *se
		c.Message = "value[" + strconv.Itoa(i) + "]: " + c.Message
		return &c
	}
	return err
}

// oracleValueArray returns the items of the `value` oracleMember of an answer object.
func oracleValueArray(data []byte) ([]json.RawMessage, error) {
	ms, err := oracleReadObject(data)
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		if m.name != "value" {
			continue
		}
		var items []json.RawMessage
		if err := json.Unmarshal(m.raw, &items); err != nil {
			return nil, spec.ErrInvalidInput.Newf("The value oracleMember is not an array: %v.", err)
		}
		return items, nil
	}
	return nil, spec.ErrInvalidInput.Newf("The answer has no value oracleMember.")
}

// DecodeTableName reads the TableName of a Create Table body or of one table object.
func oracleDecodeTableName(data []byte) (string, error) {
	ms, err := oracleReadObject(data)
	if err != nil {
		return "", err
	}
	return oracleTableNameOf(ms)
}

func oracleTableNameOf(ms []oracleMember) (string, error) {
	for _, m := range ms {
		if m.name == PropTableName {
			var s string
			if err := json.Unmarshal(m.raw, &s); err != nil {
				return "", spec.ErrInvalidInput.Newf("TableName must be a string.")
			}
			return s, nil
		}
	}
	return "", spec.ErrPropertiesNeedValue.Newf("The TableName property is missing.")
}

// DecodeTableSet reads the table names of a Query Tables answer.
func oracleDecodeTableSet(data []byte) ([]string, error) {
	items, err := oracleValueArray(data)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(items))
	for i, raw := range items {
		ms, err := oracleReadObject(raw)
		if err != nil {
			return nil, oracleWrapIndex(err, i)
		}
		n, err := oracleTableNameOf(ms)
		if err != nil {
			return nil, oracleWrapIndex(err, i)
		}
		out = append(out, n)
	}
	return out, nil
}

func oracleEntityFromMembers(ms []oracleMember, request bool) (api.Entity, error) {
	e := api.Entity{Properties: make(map[string]api.Value, len(ms)), Absent: api.AbsentPartitionKey | api.AbsentRowKey | api.AbsentTimestamp}
	types := map[string]api.EdmType{}
	values := map[string]bool{}
	for _, m := range ms {
		if base, ok := strings.CutSuffix(m.name, typeSuffix); ok {
			var s string
			if err := json.Unmarshal(m.raw, &s); err != nil {
				return api.Entity{}, spec.ErrInvalidInput.Newf("The annotation %s must be a string.", m.name)
			}
			t, known := api.ParseEdmType(s)
			if !known {
				return api.Entity{}, spec.ErrInvalidInput.Newf("The type '%s' of property '%s' is not a known type.", s, base)
			}
			types[base] = t
		} else if !strings.HasPrefix(m.name, "odata.") && !strings.Contains(m.name, "@") {
			values[m.name] = true
		}
	}
	for base := range types {
		if !values[base] {
			return api.Entity{}, spec.ErrInvalidInput.Newf("The type annotation of property '%s' has no property.", base)
		}
	}
	for _, m := range ms {
		switch {
		case strings.HasPrefix(m.name, "odata."):
			if m.name == odataEtag && !request {
				if err := json.Unmarshal(m.raw, &e.ETag); err != nil {
					return api.Entity{}, spec.ErrInvalidInput.Newf("odata.etag must be a string.")
				}
			}
			continue
		case strings.Contains(m.name, "@"):
			continue // annotations: types were read above; others carry no data
		}
		t, annotated := types[m.name]
		switch m.name {
		case PropPartitionKey, PropRowKey:
			if annotated && t != api.EdmString {
				return api.Entity{}, spec.ErrInvalidInput.Newf("The property '%s' must be of type Edm.String.", m.name)
			}
			if oracleIsNull(m.raw) {
				continue
			}
			var s string
			if err := json.Unmarshal(m.raw, &s); err != nil {
				return api.Entity{}, spec.ErrInvalidInput.Newf("The property '%s' must be a string.", m.name)
			}
			if m.name == PropPartitionKey {
				e.PartitionKey, e.Absent = s, e.Absent&^api.AbsentPartitionKey
			} else {
				e.RowKey, e.Absent = s, e.Absent&^api.AbsentRowKey
			}
			continue
		case PropTimestamp:
			if request {
				continue
			}
			if oracleIsNull(m.raw) {
				continue
			}
			v, err := oracleTypedValue(api.EdmDateTime, m.raw)
			if err != nil {
				return api.Entity{}, err
			}
			e.Timestamp, e.Absent = v.Time(), e.Absent&^api.AbsentTimestamp
			continue
		}
		var v api.Value
		var err error
		if annotated {
			v, err = oracleTypedValue(t, m.raw)
		} else {
			v, err = oracleDecodeValue(m.raw)
		}
		if err != nil {
			return api.Entity{}, oraclePropertyError(err, m.name)
		}
		e.Properties[m.name] = v
	}
	return e, nil
}

func oraclePropertyError(err error, name string) error {
	var se *spec.Error
	if errors.As(err, &se) {
		c := *se
		c.Message = c.Message + " (property '" + name + "')"
		return &c
	}
	return err
}

func oracleIsNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// DecodeValue types an unannotated JSON value by its shape (PF, SPEC.md 1.5): a string is
// Edm.String, true/false Edm.Boolean, an integer that fits 32 bits Edm.Int32, a number with a
// decimal point or exponent Edm.Double. An integer beyond 32 bits without annotation is
// UNCERTAIN on the service (SPEC.md 1.5, never observed; SDKs refuse to send it); conform reads
// it as Edm.Double, the OData fallback for numbers. null is a null of no type.
func oracleDecodeValue(raw json.RawMessage) (api.Value, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return api.Value{}, spec.ErrInvalidInput.Newf("A property has no value.")
	}
	switch raw[0] {
	case 'n':
		return api.Null(0), nil
	case 't', 'f':
		return api.Bool(raw[0] == 't'), nil
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return api.Value{}, badJSON(err)
		}
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
	if err != nil {
		return api.Value{}, spec.ErrInvalidValueType.Newf("The number %s is not a valid Edm.Double.", raw)
	}
	return api.Double(f), nil
}

// oracleTypedValue reads raw as a value of type t (an annotated property). Mismatched JSON shapes
// and unparsable values fail with 400 InvalidValueType; a DateTime outside 1601..9999 with 400
// OutOfRangeInput (SPEC.md 1.5, UNCERTAIN code as users report it).
func oracleTypedValue(t api.EdmType, raw json.RawMessage) (api.Value, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return api.Value{}, spec.ErrInvalidInput.Newf("A property has no value.")
	}
	if raw[0] == 'n' {
		return api.Null(t), nil
	}
	if raw[0] == '{' || raw[0] == '[' {
		return api.Value{}, spec.ErrInvalidInput.Newf("Objects and arrays are not property values.")
	}
	isString := raw[0] == '"'
	var s string
	if isString {
		if err := json.Unmarshal(raw, &s); err != nil {
			return api.Value{}, badJSON(err)
		}
	}
	mismatch := func() (api.Value, error) {
		return api.Value{}, spec.ErrInvalidValueType.Newf("The value %s is not a valid %s.", abbreviateRaw(raw), t)
	}
	switch t {
	case api.EdmString:
		if !isString {
			return mismatch()
		}
		return api.String(s), nil
	case api.EdmBoolean:
		// Bare or as a JSON string in any case (E-typed-string-values).
		text := string(raw)
		if isString {
			text = strings.ToLower(s)
		}
		switch text {
		case "true":
			return api.Bool(true), nil
		case "false":
			return api.Bool(false), nil
		}
		return mismatch()
	case api.EdmInt32, api.EdmInt64:
		// Bare or as a JSON string (E-typed-string-values); an optional '-' and digits.
		text := s
		if !isString {
			text = string(raw)
		}
		if !regexp.MustCompile(`^-?[0-9]+$`).MatchString(text) {
			return mismatch()
		}
		bits := 32
		if t == api.EdmInt64 {
			bits = 64
		}
		i, err := strconv.ParseInt(text, 10, bits)
		if t == api.EdmInt64 && err != nil {
			return api.Value{}, spec.ErrInvalidInput.Newf("The value %s is outside the range of Edm.Int64.", abbreviateRaw(raw))
		}
		if err != nil {
			return mismatch()
		}
		if t == api.EdmInt32 {
			return api.Int32(int32(i)), nil
		}
		return api.Int64(i), nil
	case api.EdmDouble:
		text := string(raw)
		if isString {
			switch s {
			case "NaN":
				return api.Double(math.NaN()), nil
			case "Infinity":
				return api.Double(math.Inf(1)), nil
			case "-Infinity":
				return api.Double(math.Inf(-1)), nil
			}
			var n json.Number
			if json.Unmarshal([]byte(s), &n) != nil || string(n) != s {
				return mismatch()
			}
			text = s
		}
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return mismatch()
		}
		return api.Double(f), nil
	case api.EdmDateTime:
		if !isString {
			return mismatch()
		}
		tm, err := EntityDateTime(s)
		if err != nil {
			return api.Value{}, err
		}
		return api.DateTime(tm), nil
	case api.EdmGuid:
		if !isString {
			return mismatch()
		}
		g, ok := api.CanonicalGuid(s)
		if !ok {
			return mismatch()
		}
		return api.Guid(g), nil
	case api.EdmBinary:
		if !isString {
			return mismatch()
		}
		b, err := base64.StdEncoding.Strict().DecodeString(s)
		if err != nil {
			return mismatch()
		}
		return api.Binary(b), nil
	}
	return mismatch()
}

func oracleFormatDouble(f float64) string {
	a := math.Abs(f)
	if a != 0 && (a < 1e-6 || a >= 1e21) {
		return strconv.FormatFloat(f, 'E', -1, 64)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsRune(s, '.') {
		s += ".0"
	}
	return s
}

// entitySetFragment is "tbl" or "tbl&$select=a,b" (traffic, SPEC.md 3.4).
func (d Document) entitySetFragment() string {
	if d.Select == nil {
		return d.Table
	}
	return d.Table + "&$select=" + strings.Join(d.Select, ",")
}

// oracleAppendString is appendString as it was: it appends s as a JSON string. Invalid UTF-8 becomes U+FFFD.
func oracleAppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
