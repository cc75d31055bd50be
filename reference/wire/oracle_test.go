package wire

// The decoder as it was before the single-pass scanner, kept as an oracle: the fuzz target
// FuzzDecodeMatchesOracle checks that both accept the same documents, decode the same
// entities and refuse the rest with the same error codes (the messages, and where they
// name the failing property or item, are not compared). Its EDM values are read by the
// value oracle (value_oracle_test.go), not by the shipped conversions.

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"

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
	for _, raw := range items {
		ms, err := oracleReadObject(raw)
		if err != nil {
			return nil, err
		}
		e, err := oracleEntityFromMembers(ms, false)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
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
	for _, raw := range items {
		ms, err := oracleReadObject(raw)
		if err != nil {
			return nil, err
		}
		n, err := oracleTableNameOf(ms)
		if err != nil {
			return nil, err
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
			v, err := oracleTypedValue(api.EdmDateTime, m.raw, !request)
			if err != nil {
				return api.Entity{}, err
			}
			e.Timestamp, e.Absent = v.Time(), e.Absent&^api.AbsentTimestamp
			continue
		}
		var v api.Value
		var err error
		if annotated {
			v, err = oracleTypedValue(t, m.raw, !request)
		} else {
			v, err = oracleDecodeValue(m.raw)
		}
		if err != nil {
			return api.Entity{}, err
		}
		e.Properties[m.name] = v
	}
	return e, nil
}

func oracleIsNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// DecodeValue types an unannotated JSON value by its shape (PF, EVIDENCE.md 1.5): a string is
// Edm.String, true/false Edm.Boolean, an integer that fits 32 bits Edm.Int32, a number with a
// decimal point or exponent Edm.Double. An integer beyond 32 bits without annotation is
// UNCERTAIN on the service (EVIDENCE.md 1.5, never observed; SDKs refuse to send it); conform reads
// it as Edm.Double, the OData fallback for numbers. null is a null of no type.
func oracleDecodeValue(raw json.RawMessage) (api.Value, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return api.Value{}, spec.ErrInvalidInput.Newf("A property has no value.")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return api.Value{}, badJSON(err)
	}
	switch x := v.(type) {
	case nil:
		return api.Null(0), nil
	case bool:
		return api.Bool(x), nil
	case string:
		return api.String(x), nil
	case json.Number:
		if i, err := strconv.ParseInt(x.String(), 10, 32); err == nil {
			return api.Int32(int32(i)), nil
		}
		if f, err := strconv.ParseFloat(x.String(), 64); err == nil {
			return api.Double(f), nil
		}
		return api.Value{}, spec.ErrInvalidInput.New() // beyond the range of a Double (E-double-out-of-range)
	}
	return api.Value{}, spec.ErrInvalidInput.Newf("Objects and arrays are not property values.")
}

// oracleTypedValue reads raw as a value of type t (an annotated property) by the JSON forms
// oracleEDMForms allows for t. A form not allowed, or text not of the type, is 400
// InvalidValueType; a DateTime outside 1601..9999 is 400 OutOfRangeInput; an object or an
// array is 400 InvalidInput.
func oracleTypedValue(t api.EdmType, raw json.RawMessage, answer bool) (api.Value, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0:
		return api.Value{}, spec.ErrInvalidInput.Newf("A property has no value.")
	case raw[0] == 'n':
		return api.Null(t), nil
	case raw[0] == '{' || raw[0] == '[':
		return api.Value{}, spec.ErrInvalidInput.Newf("Objects and arrays are not property values.")
	}
	form := oracleEDMForms[t]
	read, text := form.bare, string(raw)
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &text); err != nil {
			return api.Value{}, badJSON(err)
		}
		read = form.quoted
	}
	if read == nil {
		return api.Value{}, spec.ErrInvalidValueType.New()
	}
	if answer && t == api.EdmDateTime {
		tm, err := oracleDateTime(text, oracleAnswerDateTime)
		return api.DateTime(tm), err
	}
	return read(text)
}

// entitySetFragment is "tbl" or "tbl&$select=a,b" (traffic, EVIDENCE.md 3.4).
func (d Document) entitySetFragment() string {
	if d.Select == nil {
		return d.Table
	}
	return d.Table + "&$select=" + strings.Join(d.Select, ",")
}
