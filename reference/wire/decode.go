package wire

import (
	"errors"
	"strconv"
	"strings"

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
	return d.entity(ms, false, nil)
}

// DecodeRequestEntity decodes an entity from a request body. It differs from DecodeEntity
// only in that a client-supplied Timestamp is ignored, as the service ignores it (DM).
func DecodeRequestEntity(data []byte) (api.Entity, error) {
	return DecodeRequestEntityInto(data, nil)
}

// DecodeRequestEntityInto is DecodeRequestEntity with the properties decoded into props,
// which must be empty (a map the caller recycles); a nil props gets a new map. A failed
// decoding may leave properties in props.
func DecodeRequestEntityInto(data []byte, props map[string]api.Value) (api.Entity, error) {
	list := memberLists.Get().(*[]member)
	d, ms, err := readDocument(data, false, (*list)[:0])
	var e api.Entity
	if err == nil {
		e, err = d.entity(ms, true, props)
	}
	// The entity's strings are the document's text, not the list's.
	if ms != nil && cap(ms) <= maxPooledMembers {
		*list = ms[:0]
	}
	clear((*list)[:cap(*list)]) // members a failed read appended too
	memberLists.Put(list)
	return e, err
}

// DecodeRequestEntityListed is DecodeRequestEntity with the custom properties listed in name
// order (api.ListedEntity) in props's array, reused and grown as needed, instead of put in a
// map: the same entity, and the same error for the same body. Each name is listed once; a
// null value is listed as the map would hold it. The entity's strings are a copy of data.
// Only the returned list's length of its array is written (none when decoding fails), unless
// it grew into a new array: then props's array may be written to its capacity.
func DecodeRequestEntityListed(data []byte, props []api.Property) (e api.ListedEntity, err error) {
	if readFlatEntity(data, props, &e) {
		return e, nil
	}
	return decodeRequestEntityListed(data, props)
}

// decodeRequestEntityListed is DecodeRequestEntityListed by the general reader, which takes
// every body.
func decodeRequestEntityListed(data []byte, props []api.Property) (api.ListedEntity, error) {
	list := memberLists.Get().(*[]member)
	d, ms, err := readDocument(data, false, (*list)[:0])
	var e api.Entity
	ps := props[:0]
	if err == nil {
		e, err = d.entityOf(ms, true, nil, &ps)
	}
	if ms != nil && cap(ms) <= maxPooledMembers {
		*list = ms[:0]
	}
	clear((*list)[:cap(*list)])
	memberLists.Put(list)
	if err != nil {
		clear(ps)
		return api.ListedEntity{Properties: ps[:0]}, err
	}
	api.SortProperties(ps)
	return api.ListedEntity{PartitionKey: e.PartitionKey, RowKey: e.RowKey, Properties: ps, Absent: e.Absent}, nil
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
		e, err := d.entity(items[i].members, false, nil)
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
func valueArray(data []byte) (document, []item, error) {
	d, ms, err := readDocument(data, true, nil)
	if err != nil {
		return document{}, nil, err
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
		return document{}, nil, spec.ErrInvalidInput.Newf("The value member is not an array.")
	}
	return document{}, nil, spec.ErrInvalidInput.Newf("The answer has no value member.")
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

// edmTypeNamed is api.ParseEdmType by a table of the type names, found by their length and
// last byte (edmTypeKey): one comparison of strings instead of one per type.
func edmTypeNamed(name string) (api.EdmType, bool) {
	if name == "" {
		return 0, false
	}
	k := edmTypeKey(name, edmTypeTable.factor)
	if edmTypeTable.names[k] == name {
		return edmTypeTable.types[k], true
	}
	return 0, false
}

// edmTypeTable holds each EDM type and its name at the key of its name, with the smallest
// factor that gives every name a key of its own. Past a thousand factors the names are
// taken to have none, and the package does not start.
var edmTypeTable = func() (table struct {
	types  [32]api.EdmType
	names  [32]string
	factor int
}) {
	for table.factor = 1; ; table.factor++ {
		if table.factor > 1000 {
			panic("wire: no factor gives the EDM type names keys of their own; edmTypeKey needs another form")
		}
		clear(table.types[:])
		clear(table.names[:])
		unique := true
		for _, t := range api.AllEdmTypes {
			k := edmTypeKey(t.String(), table.factor)
			unique = unique && table.types[k] == 0
			table.types[k], table.names[k] = t, t.String()
		}
		if unique {
			return table
		}
	}
}()

func edmTypeKey(name string, factor int) int {
	return (len(name)*factor + int(name[len(name)-1])) & 31
}

// annotation is the type a `name@odata.type` member gives property name.
type annotation struct {
	name string
	typ  api.EdmType
}

// annotations finds the type annotations among ms: a linear search while they are few (in
// an array, so that the decoder's annotations need no allocation), a map once they are many.
type annotations struct {
	list  [annotationsLinear]annotation
	n     int // annotations in list
	index map[string]api.EdmType
}

const annotationsLinear = 8

func (a *annotations) add(name string, t api.EdmType) {
	if a.index == nil {
		for i := range a.list[:a.n] {
			if a.list[i].name == name {
				a.list[i].typ = t
				return
			}
		}
		if a.n < annotationsLinear {
			a.list[a.n] = annotation{name, t}
			a.n++
			return
		}
		a.index = make(map[string]api.EdmType, 2*a.n)
		for _, x := range a.list[:a.n] {
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
	for i := range a.list[:a.n] {
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
	for _, x := range a.list[:a.n] {
		if !f(x.name) {
			return
		}
	}
}

// isPropertyName says whether a member names a property: not odata.* and no annotation.
func isPropertyName(name string) bool {
	return !strings.HasPrefix(name, "odata.") && strings.IndexByte(name, '@') < 0
}

// entity builds the entity of members ms, its properties in props when not nil (an empty
// map).
func (d *document) entity(ms []member, request bool, props map[string]api.Value) (api.Entity, error) {
	return d.entityOf(ms, request, props, nil)
}

// entityOf is entity with the properties appended to *listed, in document order, instead
// of put in a map when listed is not nil; the entity's Properties is then nil.
func (d *document) entityOf(ms []member, request bool, props map[string]api.Value, listed *[]api.Property) (api.Entity, error) {
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
		if strings.IndexByte(base, '@') >= 0 {
			// An annotation of an annotation ("PartitionKey@odata.type@odata.type"), as
			// an early Python SDK sent: Storage ignores it (EVIDENCE.md 13,
			// E-annotation-nested).
			continue
		}
		s, isString := d.nullableString(m)
		if !isString {
			return api.Entity{}, spec.ErrInvalidInput.Newf("The annotation %s must be a string.", m.name)
		}
		t, known := edmTypeNamed(s)
		if !known {
			return api.Entity{}, spec.ErrInvalidInput.Newf("The type '%s' of property '%s' is not a known type.", s, base)
		}
		types.add(base, t)
	}
	if types.n > 0 || types.index != nil {
		if err := checkAnnotated(ms, &types); err != nil {
			return api.Entity{}, err
		}
	}
	if e.Properties = props; props == nil && listed == nil {
		e.Properties = make(map[string]api.Value, values)
	}
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
		if listed != nil {
			*listed = append(*listed, api.Property{Name: m.name, Value: v})
		} else {
			e.Properties[m.name] = v
		}
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
