package api

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"time"
)

// EdmType names one of the eight property types of the Table data model.
// Source: https://learn.microsoft.com/en-us/rest/api/storageservices/understanding-the-table-service-data-model#property-types
type EdmType string

// The EDM types, spelled as they appear in `@odata.type` annotations.
const (
	EdmString   EdmType = "Edm.String"
	EdmBinary   EdmType = "Edm.Binary"
	EdmBoolean  EdmType = "Edm.Boolean"
	EdmDateTime EdmType = "Edm.DateTime"
	EdmDouble   EdmType = "Edm.Double"
	EdmGuid     EdmType = "Edm.Guid"
	EdmInt32    EdmType = "Edm.Int32"
	EdmInt64    EdmType = "Edm.Int64"
)

// AllEdmTypes lists the eight types in documentation order.
var AllEdmTypes = []EdmType{EdmString, EdmBinary, EdmBoolean, EdmDateTime, EdmDouble, EdmGuid, EdmInt32, EdmInt64}

// Valid reports whether t is one of the eight EDM types.
func (t EdmType) Valid() bool {
	for _, k := range AllEdmTypes {
		if k == t {
			return true
		}
	}
	return false
}

// Value is one typed property value. Exactly one payload field is meaningful, chosen by
// Type: Str for String and Guid (canonical lower-case form), Bin for Binary, Bool for
// Boolean, Time for DateTime (UTC, 100 ns resolution), Float for Double, Int for Int32 and
// Int64. A Value with Null set carries no payload: sent, it means "no value" (not stored by
// Storage); it never comes back from a correct backend except for a $select of a missing
// property.
type Value struct {
	Type  EdmType
	Null  bool
	Str   string
	Bin   []byte
	Bool  bool
	Time  time.Time
	Float float64
	Int   int64
}

// String returns an Edm.String value.
func String(s string) Value { return Value{Type: EdmString, Str: s} }

// Binary returns an Edm.Binary value.
func Binary(b []byte) Value { return Value{Type: EdmBinary, Bin: b} }

// Bool returns an Edm.Boolean value.
func Bool(b bool) Value { return Value{Type: EdmBoolean, Bool: b} }

// DateTime returns an Edm.DateTime value, converted to UTC and truncated to 100 ns ticks.
func DateTime(t time.Time) Value { return Value{Type: EdmDateTime, Time: TruncateTicks(t)} }

// Double returns an Edm.Double value.
func Double(f float64) Value { return Value{Type: EdmDouble, Float: f} }

// Guid returns an Edm.Guid value in its canonical lower-case 8-4-4-4-12 form.
func Guid(s string) Value { return Value{Type: EdmGuid, Str: s} }

// Int32 returns an Edm.Int32 value.
func Int32(i int32) Value { return Value{Type: EdmInt32, Int: int64(i)} }

// Int64 returns an Edm.Int64 value.
func Int64(i int64) Value { return Value{Type: EdmInt64, Int: i} }

// Null returns a null value of type t (t may be empty).
func Null(t EdmType) Value { return Value{Type: t, Null: true} }

// TruncateTicks converts t to UTC and drops anything finer than the 100 ns tick.
func TruncateTicks(t time.Time) time.Time { return t.UTC().Truncate(100 * time.Nanosecond) }

// Equal reports whether v and o have the same type and the same value. Doubles compare by
// bit pattern except that every NaN equals every NaN; times compare as instants.
func (v Value) Equal(o Value) bool {
	if v.Type != o.Type || v.Null != o.Null {
		return false
	}
	if v.Null {
		return true
	}
	switch v.Type {
	case EdmString, EdmGuid:
		return v.Str == o.Str
	case EdmBinary:
		return bytes.Equal(v.Bin, o.Bin)
	case EdmBoolean:
		return v.Bool == o.Bool
	case EdmDateTime:
		return v.Time.Equal(o.Time)
	case EdmDouble:
		if math.IsNaN(v.Float) && math.IsNaN(o.Float) {
			return true
		}
		return math.Float64bits(v.Float) == math.Float64bits(o.Float) || v.Float == o.Float
	case EdmInt32, EdmInt64:
		return v.Int == o.Int
	}
	return false
}

// Clone returns a copy of v that shares no memory with it.
func (v Value) Clone() Value {
	if v.Bin != nil {
		v.Bin = append([]byte(nil), v.Bin...)
	}
	return v
}

// GoString renders v for failure messages, e.g. `Edm.Int64(42)`.
func (v Value) GoString() string { return v.String() }

// String renders v for failure messages, e.g. `Edm.Int64(42)`.
func (v Value) String() string {
	if v.Null {
		return fmt.Sprintf("%s(null)", v.Type)
	}
	var s string
	switch v.Type {
	case EdmString, EdmGuid:
		s = strconv.Quote(abbreviate(v.Str))
	case EdmBinary:
		s = fmt.Sprintf("%d bytes", len(v.Bin))
	case EdmBoolean:
		s = strconv.FormatBool(v.Bool)
	case EdmDateTime:
		s = FormatDateTime(v.Time)
	case EdmDouble:
		s = strconv.FormatFloat(v.Float, 'g', -1, 64)
	case EdmInt32, EdmInt64:
		s = strconv.FormatInt(v.Int, 10)
	}
	return fmt.Sprintf("%s(%s)", v.Type, s)
}

func abbreviate(s string) string {
	if len(s) > 60 {
		return s[:40] + fmt.Sprintf("...(%d bytes)", len(s))
	}
	return s
}

// FormatDateTime renders t as the service does: UTC, up to seven fractional digits, trailing
// zeros trimmed (Storage's form; CONFIRMED-TRAFFIC, SPEC.md 1.5).
func FormatDateTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.9999999Z")
}

// FormatDateTime7 renders t with exactly seven fractional digits (Timestamp and ETag form).
func FormatDateTime7(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.0000000Z")
}
