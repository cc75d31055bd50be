package sdk

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tableconform/conform/reference/api"
)

// The system property names and the annotation suffix of the JSON payload format
// (EVIDENCE.md 6; https://learn.microsoft.com/en-us/rest/api/storageservices/payload-format-for-table-service-operations).
const (
	propPartitionKey = "PartitionKey"
	propRowKey       = "RowKey"
	propTimestamp    = "Timestamp"
	odataTypeSuffix  = "@odata.type"
	odataEtag        = "odata.etag"
	odataPrefix      = "odata."
)

// encodeEntity renders e as the JSON body of an insert or update. Every type that JSON
// cannot carry unambiguously gets an explicit `@odata.type`: Binary, DateTime, Double, Guid
// and Int64 (EVIDENCE.md 1.5; 12 #1, #2, #5). Keys are written verbatim (12 #6).
func encodeEntity(e api.Entity) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	writeMember(&b, propPartitionKey, jsonString(e.PartitionKey))
	b.WriteByte(',')
	writeMember(&b, propRowKey, jsonString(e.RowKey))
	for _, name := range e.PropertyNames() {
		v := e.Properties[name]
		raw, annotate, err := encodeValue(v)
		if err != nil {
			return nil, fmt.Errorf("property %q: %w", name, err)
		}
		if annotate {
			b.WriteByte(',')
			writeMember(&b, name+odataTypeSuffix, jsonString(v.Type.String()))
		}
		b.WriteByte(',')
		writeMember(&b, name, raw)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func writeMember(b *bytes.Buffer, name, raw string) {
	b.WriteString(jsonString(name))
	b.WriteByte(':')
	b.WriteString(raw)
}

func jsonString(s string) string {
	out, err := json.Marshal(s)
	if err != nil { // unreachable: a Go string always marshals
		return `""`
	}
	return string(out)
}

// encodeValue returns v's JSON form and whether it needs a type annotation.
func encodeValue(v api.Value) (raw string, annotate bool, err error) {
	if v.Null {
		return "null", false, nil
	}
	switch v.Type {
	case api.EdmString:
		return jsonString(v.Str), false, nil
	case api.EdmBoolean:
		return strconv.FormatBool(v.Bool), false, nil
	case api.EdmInt32:
		if v.Int() < math.MinInt32 || v.Int() > math.MaxInt32 {
			return "", false, fmt.Errorf("Edm.Int32 value %d out of range", v.Int())
		}
		return strconv.FormatInt(v.Int(), 10), false, nil
	case api.EdmInt64:
		return jsonString(strconv.FormatInt(v.Int(), 10)), true, nil
	case api.EdmDouble:
		switch {
		case math.IsNaN(v.Float()):
			return `"NaN"`, true, nil
		case math.IsInf(v.Float(), 1):
			return `"Infinity"`, true, nil
		case math.IsInf(v.Float(), -1):
			return `"-Infinity"`, true, nil
		}
		return strconv.FormatFloat(v.Float(), 'g', -1, 64), true, nil
	case api.EdmDateTime:
		return jsonString(api.FormatDateTime(api.TruncateTicks(v.Time()))), true, nil
	case api.EdmGuid:
		return jsonString(v.Str), true, nil
	case api.EdmBinary:
		return jsonString(base64.StdEncoding.EncodeToString(v.Bin())), true, nil
	}
	return "", false, fmt.Errorf("unknown EDM type %q", v.Type)
}

// decodeEntity reads one entity of a minimal-metadata JSON answer. Types come from the
// `@odata.type` annotations, else from the JSON shape: string, boolean, and a number that
// is Int32 when it is an integer literal and Double when it has a fraction or exponent
// (EVIDENCE.md 1.5, 6). System properties that are not in the answer are flagged in Absent.
func decodeEntity(raw []byte) (api.Entity, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var members map[string]json.RawMessage
	if err := dec.Decode(&members); err != nil {
		return api.Entity{}, fmt.Errorf("decode entity: %w", err)
	}
	return decodeMembers(members)
}

func decodeMembers(members map[string]json.RawMessage) (api.Entity, error) {
	e := api.NewEntity("", "", nil)
	types := map[string]api.EdmType{}
	for name, raw := range members {
		if prop, ok := strings.CutSuffix(name, odataTypeSuffix); ok {
			var t string
			if err := json.Unmarshal(raw, &t); err != nil {
				return api.Entity{}, fmt.Errorf("annotation %q: %w", name, err)
			}
			typ, known := api.ParseEdmType(t)
			if !known {
				return api.Entity{}, fmt.Errorf("annotation %q: unknown EDM type %q", name, t)
			}
			types[prop] = typ
		}
	}
	e.Absent = api.AbsentPartitionKey | api.AbsentRowKey | api.AbsentTimestamp
	for name, raw := range members {
		switch {
		case strings.HasSuffix(name, odataTypeSuffix):
			continue
		case name == odataEtag:
			if err := json.Unmarshal(raw, &e.ETag); err != nil {
				return api.Entity{}, fmt.Errorf("%s: %w", odataEtag, err)
			}
			continue
		case strings.HasPrefix(name, odataPrefix):
			continue
		case name == propPartitionKey || name == propRowKey:
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return api.Entity{}, fmt.Errorf("%s: %w", name, err)
			}
			if name == propPartitionKey {
				e.PartitionKey, e.Absent = s, e.Absent&^api.AbsentPartitionKey
			} else {
				e.RowKey, e.Absent = s, e.Absent&^api.AbsentRowKey
			}
			continue
		case name == propTimestamp:
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return api.Entity{}, fmt.Errorf("%s: %w", name, err)
			}
			t, err := parseDateTime(s)
			if err != nil {
				return api.Entity{}, fmt.Errorf("%s: %w", name, err)
			}
			e.Timestamp, e.Absent = t, e.Absent&^api.AbsentTimestamp
			continue
		}
		v, err := decodeValue(raw, types[name])
		if err != nil {
			return api.Entity{}, fmt.Errorf("property %q: %w", name, err)
		}
		e.Properties[name] = v
	}
	return e, nil
}

func decodeValue(raw json.RawMessage, t api.EdmType) (api.Value, error) {
	raw = bytes.TrimSpace(raw)
	if bytes.Equal(raw, []byte("null")) {
		return api.Null(t), nil
	}
	if t == 0 {
		return inferValue(raw)
	}
	switch t {
	case api.EdmString, api.EdmGuid:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return api.Value{}, fmt.Errorf("%s: %w", t, err)
		}
		if t == api.EdmGuid {
			return api.Guid(s), nil
		}
		return api.String(s), nil
	case api.EdmBoolean:
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return api.Value{}, fmt.Errorf("%s: %w", t, err)
		}
		return api.Bool(b), nil
	case api.EdmBinary:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return api.Value{}, fmt.Errorf("%s: %w", t, err)
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return api.Value{}, fmt.Errorf("%s: %w", t, err)
		}
		return api.Binary(b), nil
	case api.EdmDateTime:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return api.Value{}, fmt.Errorf("%s: %w", t, err)
		}
		tm, err := parseDateTime(s)
		if err != nil {
			return api.Value{}, err
		}
		return api.DateTime(tm), nil
	case api.EdmDouble:
		f, err := parseDouble(raw)
		if err != nil {
			return api.Value{}, err
		}
		return api.Double(f), nil
	case api.EdmInt32, api.EdmInt64:
		text := string(raw)
		if raw[0] == '"' {
			if err := json.Unmarshal(raw, &text); err != nil {
				return api.Value{}, fmt.Errorf("%s: %w", t, err)
			}
		}
		bits := 64
		if t == api.EdmInt32 {
			bits = 32
		}
		i, err := strconv.ParseInt(text, 10, bits)
		if err != nil {
			return api.Value{}, fmt.Errorf("%s: %w", t, err)
		}
		if t == api.EdmInt32 {
			return api.Int32(int32(i)), nil
		}
		return api.Int64(i), nil
	}
	return api.Value{}, fmt.Errorf("unknown type annotation %q", t)
}

// inferValue types an unannotated JSON value by its shape (EVIDENCE.md 6, minimal metadata).
func inferValue(raw json.RawMessage) (api.Value, error) {
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return api.Value{}, err
		}
		return api.String(s), nil
	case 't', 'f':
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return api.Value{}, err
		}
		return api.Bool(b), nil
	}
	text := string(raw)
	if !strings.ContainsAny(text, ".eE") {
		if i, err := strconv.ParseInt(text, 10, 32); err == nil {
			return api.Int32(int32(i)), nil
		}
		// An integer beyond Int32 with no annotation: the service should never send one
		// (EVIDENCE.md 1.5); keep its value exactly.
		if i, err := strconv.ParseInt(text, 10, 64); err == nil {
			return api.Int64(i), nil
		}
	}
	f, err := parseDouble(raw)
	if err != nil {
		return api.Value{}, fmt.Errorf("unannotated value %s: %w", abbreviate(text), err)
	}
	return api.Double(f), nil
}

func parseDouble(raw json.RawMessage) (float64, error) {
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, err
		}
		switch s {
		case "NaN":
			return math.NaN(), nil
		case "Infinity", "INF":
			return math.Inf(1), nil
		case "-Infinity", "-INF":
			return math.Inf(-1), nil
		}
		return strconv.ParseFloat(s, 64)
	}
	return strconv.ParseFloat(string(raw), 64)
}

// parseDateTime accepts the DateTime forms a service sends: RFC 3339 with up to seven
// fractional digits and a Z or numeric offset (EVIDENCE.md 1.5).
func parseDateTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("Edm.DateTime %q: %w", s, err)
	}
	return api.TruncateTicks(t), nil
}

// decodeEntitySet reads the "value" array of a query answer.
func decodeEntitySet(raw []byte) ([]api.Entity, error) {
	var body struct {
		Value []json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		return nil, fmt.Errorf("decode query answer: %w", err)
	}
	out := make([]api.Entity, 0, len(body.Value))
	for i, item := range body.Value {
		e, err := decodeEntity(item)
		if err != nil {
			return nil, fmt.Errorf("entity %d: %w", i, err)
		}
		out = append(out, e)
	}
	return out, nil
}

func abbreviate(s string) string {
	if len(s) > 60 {
		return s[:40] + fmt.Sprintf("...(%d bytes)", len(s))
	}
	return s
}
