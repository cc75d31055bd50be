package api

import (
	"slices"
	"strings"
	"time"
)

// Property is one custom property of an entity: its name and value.
type Property struct {
	Name  string
	Value Value
}

// ListedEntity is an Entity whose custom properties are a list in the byte order of their
// names, the order in which answers show them, instead of a map: a backend can hand out
// entities in this form without building a map for each. Properties holds each name once
// and no system property.
type ListedEntity struct {
	PartitionKey string
	RowKey       string
	Timestamp    time.Time
	ETag         string
	Properties   []Property
	Absent       Absent
	// PlainText, when set, says that every property name and Edm.String value is ASCII
	// from 0x20 on other than '"' and '\\', text a JSON string holds as it is: the decoder
	// that read them so sets it, and an encoder may then copy them without looking again.
	// Unset, it says nothing. Whoever changes a name or a String value clears it.
	PlainText bool
}

// ListedPage is a Page of ListedEntity.
type ListedPage struct {
	Entities     []ListedEntity
	Continuation Continuation
}

// SortProperties puts ps in the byte order of their names. Entities have few properties,
// which it sorts by insertion.
func SortProperties(ps []Property) {
	if len(ps) > 12 {
		slices.SortFunc(ps, func(a, b Property) int { return strings.Compare(a.Name, b.Name) })
		return
	}
	for i := 1; i < len(ps); i++ {
		if a, b := ps[i-1].Name, ps[i].Name; a != "" && b != "" && a[0] < b[0] || a <= b {
			continue // in order: most names differ in their first byte
		}
		p := ps[i]
		j := i
		for j > 0 && strings.Compare(ps[j-1].Name, p.Name) > 0 {
			ps[j] = ps[j-1]
			j--
		}
		ps[j] = p
	}
}
