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

func badJSON(err error) error {
	return spec.ErrInvalidInput.Newf("The JSON payload is not valid: %v.", err)
}

// DecodeEntity decodes an entity from an answer (Get Entity, Insert Entity with
// return-content, a batch retrieve): the keys, Timestamp, odata.etag and every custom
// property typed by its annotation or, unannotated, by its JSON shape (see DecodeValue).
// System properties the object lacks are flagged in Absent. The entity shares no memory
// with data, which the caller may reuse.
func DecodeEntity(data []byte) (api.Entity, error) {
	d, ms, err := readObject(data)
	if err != nil {
		return api.Entity{}, err
	}
	return d.entity(ms, false)
}

// DecodeRequestEntity decodes an entity from a request body. It differs from DecodeEntity
// only in that a client-supplied Timestamp is ignored, as the service ignores it (DM).
func DecodeRequestEntity(data []byte) (api.Entity, error) {
	d, ms, err := readObject(data)
	if err != nil {
		return api.Entity{}, err
	}
	return d.entity(ms, true)
}

// DecodeEntitySet decodes the `value` array of a Query Entities answer.
func DecodeEntitySet(data []byte) ([]api.Entity, error) {
	d, items, err := valueArray(data)
	if err != nil {
		return nil, err
	}
	out := make([]api.Entity, 0, len(items))
	for i := range items {
		if items[i].err != nil {
			return nil, wrapIndex(items[i].err, i)
		}
		e, err := d.entity(items[i].members, false)
		if err != nil {
			return nil, wrapIndex(err, i)
		}
		out = append(out, e)
	}
	return out, nil
}

func wrapIndex(err error, i int) error {
	var se *spec.Error
	if errors.As(err, &se) {
		c := *se
		c.Message = "value[" + strconv.Itoa(i) + "]: " + c.Message
		return &c
	}
	return err
}

// valueArray returns the items of the `value` member of an answer object, read in the same
// pass as the answer.
func valueArray(data []byte) (*document, []item, error) {
	d, ms, err := readDocument(data, true)
	if err != nil {
		return nil, nil, err
	}
	for i := range ms {
		m := &ms[i]
		if m.name != "value" {
			continue
		}
		if m.items != nil {
			return d, m.items, nil
		}
		if d.data[m.start] == 'n' { // null: no items
			return d, nil, nil
		}
		return nil, nil, spec.ErrInvalidInput.Newf("The value member is not an array.")
	}
	return nil, nil, spec.ErrInvalidInput.Newf("The answer has no value member.")
}

// DecodeTableName reads the TableName of a Create Table body or of one table object.
func DecodeTableName(data []byte) (string, error) {
	d, ms, err := readObject(data)
	if err != nil {
		return "", err
	}
	return d.tableName(ms)
}

func (d *document) tableName(ms []member) (string, error) {
	for i := range ms {
		if ms[i].name == PropTableName {
			s, ok := d.nullableString(&ms[i])
			if !ok {
				return "", spec.ErrInvalidInput.Newf("TableName must be a string.")
			}
			return s, nil
		}
	}
	return "", spec.ErrPropertiesNeedValue.Newf("The TableName property is missing.")
}

// nullableString reads a member's value as a Go string is unmarshalled from JSON: a string,
// or null for "".
func (d *document) nullableString(m *member) (string, bool) {
	switch d.data[m.start] {
	case '"':
		return d.stringValue(m), true
	case 'n':
		return "", true
	}
	return "", false
}

// DecodeTableSet reads the table names of a Query Tables answer.
func DecodeTableSet(data []byte) ([]string, error) {
	d, items, err := valueArray(data)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(items))
	for i := range items {
		if items[i].err != nil {
			return nil, wrapIndex(items[i].err, i)
		}
		n, err := d.tableName(items[i].members)
		if err != nil {
			return nil, wrapIndex(err, i)
		}
		out = append(out, n)
	}
	return out, nil
}

// annotation is the type a `name@odata.type` member gives property name.
type annotation struct {
	name string
	typ  api.EdmType
}

// annotations finds the type annotations among ms: a linear search while they are few, a
// map once they are many.
type annotations struct {
	list  []annotation
	index map[string]api.EdmType
}

const annotationsLinear = 8

func (a *annotations) add(name string, t api.EdmType) {
	if a.index == nil {
		for i := range a.list {
			if a.list[i].name == name {
				a.list[i].typ = t
				return
			}
		}
		if len(a.list) < annotationsLinear {
			a.list = append(a.list, annotation{name, t})
			return
		}
		a.index = make(map[string]api.EdmType, 2*len(a.list))
		for _, x := range a.list {
			a.index[x.name] = x.typ
		}
	}
	a.index[name] = t
}

func (a *annotations) get(name string) (api.EdmType, bool) {
	if a.index != nil {
		t, ok := a.index[name]
		return t, ok
	}
	for i := range a.list {
		if a.list[i].name == name {
			return a.list[i].typ, true
		}
	}
	return 0, false
}

// each calls f for every annotation until f returns false.
func (a *annotations) each(f func(name string) bool) {
	if a.index != nil {
		for n := range a.index {
			if !f(n) {
				return
			}
		}
		return
	}
	for _, x := range a.list {
		if !f(x.name) {
			return
		}
	}
}

// isPropertyName says whether a member names a property: not odata.* and no annotation.
func isPropertyName(name string) bool {
	return !strings.HasPrefix(name, "odata.") && strings.IndexByte(name, '@') < 0
}

func (d *document) entity(ms []member, request bool) (api.Entity, error) {
	e := api.Entity{Absent: api.AbsentPartitionKey | api.AbsentRowKey | api.AbsentTimestamp}
	var types annotations
	values := 0 // members that may be properties: the map's size, without annotations
	for i := range ms {
		m := &ms[i]
		base, ok := strings.CutSuffix(m.name, typeSuffix)
		if !ok {
			if !strings.HasPrefix(m.name, "odata.") && strings.IndexByte(m.name, '@') < 0 {
				values++
			}
			continue
		}
		s, isString := d.nullableString(m)
		if !isString {
			return api.Entity{}, spec.ErrInvalidInput.Newf("The annotation %s must be a string.", m.name)
		}
		t, known := api.ParseEdmType(s)
		if !known {
			return api.Entity{}, spec.ErrInvalidInput.Newf("The type '%s' of property '%s' is not a known type.", s, base)
		}
		types.add(base, t)
	}
	if len(types.list) > 0 || types.index != nil {
		if err := checkAnnotated(ms, &types); err != nil {
			return api.Entity{}, err
		}
	}
	e.Properties = make(map[string]api.Value, values)
	for i := range ms {
		m := &ms[i]
		switch {
		case strings.HasPrefix(m.name, "odata."):
			if m.name == odataEtag && !request {
				s, ok := d.nullableString(m)
				if !ok {
					return api.Entity{}, spec.ErrInvalidInput.Newf("odata.etag must be a string.")
				}
				if d.data[m.start] != 'n' {
					e.ETag = s
				}
			}
			continue
		case strings.IndexByte(m.name, '@') >= 0:
			continue // annotations: types were read above; others carry no data
		}
		t, annotated := types.get(m.name)
		raw := d.data[m.start:m.end]
		switch m.name {
		case PropPartitionKey, PropRowKey:
			if annotated && t != api.EdmString {
				return api.Entity{}, spec.ErrInvalidInput.Newf("The property '%s' must be of type Edm.String.", m.name)
			}
			if raw[0] == 'n' {
				continue
			}
			if raw[0] != '"' {
				return api.Entity{}, spec.ErrInvalidInput.Newf("The property '%s' must be a string.", m.name)
			}
			s := d.stringValue(m)
			if m.name == PropPartitionKey {
				e.PartitionKey, e.Absent = s, e.Absent&^api.AbsentPartitionKey
			} else {
				e.RowKey, e.Absent = s, e.Absent&^api.AbsentRowKey
			}
			continue
		case PropTimestamp:
			if request || raw[0] == 'n' {
				continue
			}
			v, err := scalarOfType(api.EdmDateTime, raw, d.scalarString(m), !request)
			if err != nil {
				return api.Entity{}, err
			}
			e.Timestamp, e.Absent = v.Time(), e.Absent&^api.AbsentTimestamp
			continue
		}
		var v api.Value
		var err error
		if annotated {
			v, err = scalarOfType(t, raw, d.scalarString(m), !request)
		} else {
			v, err = scalarOfShape(raw, d.scalarString(m))
		}
		if err != nil {
			return api.Entity{}, propertyError(err, m.name)
		}
		e.Properties[m.name] = v
	}
	return e, nil
}

// checkAnnotated refuses a type annotation whose property is absent.
func checkAnnotated(ms []member, types *annotations) error {
	var missing string
	found := true
	if types.index == nil && len(ms) <= 64 {
		types.each(func(name string) bool {
			for i := range ms {
				if ms[i].name == name && isPropertyName(name) {
					return true
				}
			}
			missing, found = name, false
			return false
		})
	} else {
		values := make(map[string]struct{}, len(ms))
		for i := range ms {
			if isPropertyName(ms[i].name) {
				values[ms[i].name] = struct{}{}
			}
		}
		types.each(func(name string) bool {
			if _, ok := values[name]; ok {
				return true
			}
			missing, found = name, false
			return false
		})
	}
	if !found {
		return spec.ErrInvalidInput.Newf("The type annotation of property '%s' has no property.", missing)
	}
	return nil
}

// scalarString is the text of m's value when it is a string literal, else "".
func (d *document) scalarString(m *member) string {
	if d.data[m.start] == '"' {
		return d.stringValue(m)
	}
	return ""
}

func propertyError(err error, name string) error {
	var se *spec.Error
	if errors.As(err, &se) {
		c := *se
		c.Message = c.Message + " (property '" + name + "')"
		return &c
	}
	return err
}

// DecodeValue types an unannotated JSON value by its shape (PF, SPEC.md 1.5): a string is
// Edm.String, true/false Edm.Boolean, an integer that fits 32 bits Edm.Int32, a number with a
// decimal point or exponent Edm.Double. An integer beyond 32 bits without annotation is
// UNCERTAIN on the service (SPEC.md 1.5, never observed; SDKs refuse to send it); conform reads
// it as Edm.Double, the OData fallback for numbers. null is a null of no type.
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
	if err != nil {
		return api.Value{}, spec.ErrInvalidValueType.Newf("The number %s is not a valid Edm.Double.", raw)
	}
	return api.Double(f), nil
}

// scalarOfType reads a trimmed, non-empty value as a value of type t (an annotated
// property); s is its text when it is a string literal. Mismatched JSON shapes and
// unparsable values fail with 400 InvalidValueType; a DateTime outside 1601..9999 with 400
// OutOfRangeInput (SPEC.md 1.5, UNCERTAIN code as users report it). In an answer
// (answer true) a DateTime is read as ParseAnswerDateTime reads it.
func scalarOfType(t api.EdmType, raw []byte, s string, answer bool) (api.Value, error) {
	if raw[0] == 'n' {
		return api.Null(t), nil
	}
	if raw[0] == '{' || raw[0] == '[' {
		return api.Value{}, spec.ErrInvalidInput.Newf("Objects and arrays are not property values.")
	}
	isString := raw[0] == '"'
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
		switch string(raw) {
		case "true":
			return api.Bool(true), nil
		case "false":
			return api.Bool(false), nil
		}
		return mismatch()
	case api.EdmInt32:
		if isString {
			return mismatch()
		}
		i, err := strconv.ParseInt(string(raw), 10, 32)
		if err != nil {
			return mismatch()
		}
		return api.Int32(int32(i)), nil
	case api.EdmInt64:
		// Int64 is a JSON string (PF). A bare number with the annotation is UNCERTAIN
		// (SPEC.md 1.5); conform accepts an integer.
		text := s
		if !isString {
			text = string(raw)
		}
		if text == "" || text[0] == '+' {
			return mismatch()
		}
		i, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return mismatch()
		}
		return api.Int64(i), nil
	case api.EdmDouble:
		if isString {
			switch s {
			case "NaN":
				return api.Double(math.NaN()), nil
			case "Infinity":
				return api.Double(math.Inf(1)), nil
			case "-Infinity":
				return api.Double(math.Inf(-1)), nil
			}
			return mismatch()
		}
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil {
			return mismatch()
		}
		return api.Double(f), nil
	case api.EdmDateTime:
		if !isString {
			return mismatch()
		}
		parse := ParseDateTime
		if answer {
			parse = ParseAnswerDateTime
		}
		tm, err := parse(s)
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

func abbreviateRaw(raw []byte) string {
	if len(raw) > 40 {
		return string(raw[:40]) + "..."
	}
	return string(raw)
}

// ParseAnswerDateTime reads an Edm.DateTime as a backend may send it in an answer, more
// leniently than a request is read: more than seven fractional digits (an emulator's
// nine-digit Timestamp; digits beyond the service's 100 ns are dropped) and dates outside
// 1601..9999 (the service returns dates before 1601 it stored). Whether such a value
// breaks a rule is for the spec of that rule to say, with the value as evidence; the
// client never turns it into a 400 the backend did not send.
func ParseAnswerDateTime(s string) (time.Time, error) {
	if t, ok := api.ParseDateTime(s); ok {
		return t, nil
	}
	if i := strings.IndexByte(s, '.'); i >= 0 {
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j-i-1 > 7 {
			if t, ok := api.ParseDateTime(s[:i+8] + s[j:]); ok {
				return t, nil
			}
		}
	}
	return time.Time{}, spec.ErrInvalidValueType.Newf("The value '%s' is not a valid Edm.DateTime.", abbreviateRaw([]byte(s)))
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
