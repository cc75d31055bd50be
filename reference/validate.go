package reference

import (
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/internal/store"
	"github.com/tableconform/conform/reference/spec"
)

// tableNamePattern is DM's rule for table names (EVIDENCE.md 1.1).
var tableNamePattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]{2,62}$`)

// checkTableName validates a name for Create Table: InvalidResourceName for characters
// (CONFIRMED-TRAFFIC) and for a reserved name (spec.ReservedTableNames), errTableNameLength
// for a name of valid characters and the wrong length.
func checkTableName(name string) *spec.Error {
	if tableNamePattern.MatchString(name) {
		for _, r := range spec.ReservedTableNames {
			if strings.EqualFold(name, r) {
				return spec.ErrInvalidResourceName.New()
			}
		}
		return nil
	}
	if len(name) > 0 && isASCIILetter(name[0]) && strings.IndexFunc(name, notASCIIAlnum) < 0 {
		return errTableNameLength()
	}
	return spec.ErrInvalidResourceName.New()
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func notASCIIAlnum(r rune) bool {
	return !(r < utf8.RuneSelf && (isASCIILetter(byte(r)) || r >= '0' && r <= '9'))
}

// utf16Len returns the length of s in UTF-16 code units, the unit in which the service
// counts characters.
func utf16Len(s string) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c < 0x80:
		case c >= 0xF0: // a 4-byte sequence: one rune, two code units, four bytes
			n -= 2
		case c >= 0xC0: // the lead of a 2- or 3-byte sequence: one code unit
			if c >= 0xE0 {
				n -= 2
			} else {
				n--
			}
		}
	}
	return n
}

// forbiddenKeyRune reports the characters DM forbids in PartitionKey and RowKey
// (EVIDENCE.md 1.2).
func forbiddenKeyRune(r rune) bool {
	return r == '/' || r == '\\' || r == '#' || r == '?' || r <= 0x1F || (r >= 0x7F && r <= 0x9F)
}

// checkKey validates a PartitionKey or RowKey value to be stored: UTF-8, no forbidden
// character, at most spec.MaxKeyBytes counted in UTF-16.
func checkKey(key string) *spec.Error {
	_, err := checkKeyUnits(key)
	return err
}

// checkKeyUnits is checkKey that also returns the key's length in UTF-16 code units
// (api.UTF16Len). An ASCII key is read eight bytes at a time.
func checkKeyUnits(key string) (int, *spec.Error) {
	i := 0
	for ; i+8 <= len(key); i += 8 {
		if !plainKeyWord(word(key[i : i+8])) {
			break
		}
	}
	for ; i < len(key); i++ {
		c := key[i]
		if c >= utf8.RuneSelf {
			return checkNonASCIIKey(key)
		}
		if forbiddenKeyByte[c] {
			return 0, errInvalidKey()
		}
	}
	if 2*len(key) > spec.MaxKeyBytes {
		return 0, errInvalidKey()
	}
	return len(key), nil
}

// plainKeyWord reports whether none of the eight bytes of w is a character forbiddenKeyRune
// reports or a byte of a non-ASCII character.
func plainKeyWord(w uint64) bool {
	const ones = 0x0101010101010101
	// A byte b below k (here 1, for a zero byte after xor, or 0x20) sets the high bit of
	// (b - k) &^ b; a borrow into a higher byte starts only at such a byte, so the word has
	// one exactly when some high bit is set.
	slash, backslash, hash, question, del := w^'/'*ones, w^'\\'*ones, w^'#'*ones, w^'?'*ones, w^0x7F*ones
	bad := w | (w-0x20*ones)&^w | // a byte of 0x80 or more, or below 0x20
		(slash-ones)&^slash | (backslash-ones)&^backslash | (hash-ones)&^hash |
		(question-ones)&^question | (del-ones)&^del
	return bad&highBits == 0
}

// forbiddenKeyByte marks the ASCII characters forbiddenKeyRune reports.
var forbiddenKeyByte = func() (table [utf8.RuneSelf]bool) {
	for c := range table {
		table[c] = forbiddenKeyRune(rune(c))
	}
	return table
}()

// checkNonASCIIKey is checkKeyUnits for a key that is not all ASCII.
func checkNonASCIIKey(key string) (int, *spec.Error) {
	if !utf8.ValidString(key) {
		return 0, errInvalidKey()
	}
	units := 0
	for _, r := range key {
		if forbiddenKeyRune(r) {
			return 0, errInvalidKey()
		}
		units++
		if r >= 0x10000 {
			units++
		}
	}
	if 2*units > spec.MaxKeyBytes {
		return 0, errInvalidKey()
	}
	return units, nil
}

// checkPropertyName validates a custom property name (DM, EVIDENCE.md 1.3): at most 255
// characters, not PartitionKey or RowKey, and a C# identifier: a letter or '_', then
// letters, decimal digits, connecting punctuation, combining marks and format characters.
func checkPropertyName(name string, maxLength int) *spec.Error {
	if maxLength > 0 && utf16Len(name) > maxLength {
		return spec.ErrPropertyNameTooLong.New()
	}
	if name == partitionKeyName || name == rowKeyName {
		return errSystemPropertyName()
	}
	if !isIdentifier(name) {
		return spec.ErrPropertyNameInvalid.New()
	}
	return nil
}

func isIdentifier(name string) bool {
	if name == "" || !utf8.ValidString(name) {
		return false
	}
	for i, r := range name {
		if r < utf8.RuneSelf {
			if r == '_' || isASCIILetter(byte(r)) || (i > 0 && r >= '0' && r <= '9') {
				continue
			}
			return false
		}
		letter := unicode.IsLetter(r) || unicode.Is(unicode.Nl, r)
		if i == 0 {
			if !letter {
				return false
			}
			continue
		}
		if !letter && !unicode.In(r, unicode.Nd, unicode.Pc, unicode.Mn, unicode.Mc, unicode.Cf) {
			return false
		}
	}
	return true
}

// checkValue validates a non-null property value against its type's range (DM, EVIDENCE.md
// 1.5).
func checkValue(v api.Value) *spec.Error {
	switch v.Type {
	case api.EdmString:
		if !utf8.ValidString(v.Str) {
			return errInvalidValue()
		}
		if len(v.Str) > spec.MaxStoredStringUnits && utf16Len(v.Str) > spec.MaxStoredStringUnits {
			return spec.ErrPropertyValueTooLarge.New()
		}
	case api.EdmBinary:
		if len(v.Bin()) > spec.MaxBinaryBytes {
			return spec.ErrPropertyValueTooLarge.New()
		}
	case api.EdmDateTime:
		if v.Time().Before(spec.MinDateTime) || v.Time().After(spec.MaxDateTime) {
			return errDateTimeRange()
		}
	case api.EdmInt32:
		if v.Int() < math.MinInt32 || v.Int() > math.MaxInt32 {
			return errInvalidValue()
		}
	case api.EdmGuid:
		if !isGuid(v.Str) {
			return errInvalidValue()
		}
	case api.EdmBoolean, api.EdmDouble, api.EdmInt64:
	default:
		return errInvalidValue()
	}
	return nil
}

// isGuid reports whether s is a Guid in its text form: 32 hexadecimal digits, in either
// case, in groups of 8-4-4-4-12 separated by '-'.
func isGuid(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := range len(s) {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'f') {
				return false
			}
		}
	}
	return true
}

// checkProperty validates one property as sent, name first. A name the store has interned
// (knownName) was valid when it was first stored, and is not checked again.
func checkProperty(name string, v api.Value, knownName bool, maxNameLength int) *spec.Error {
	if name == timestampName {
		return nil // ignored, see storedProperty
	}
	if !knownName {
		if err := checkPropertyName(name, maxNameLength); err != nil {
			return err
		}
	}
	if v.Null {
		return nil
	}
	return checkValue(v)
}

// checkEntity validates an entity to be written: that it has both keys, the keys, the number of properties that
// will be stored, then each property in ordinal name order (so that the answer does not
// depend on map order); a value too large in an entity over 1 MiB is EntityTooLarge. The
// size of what is stored is checked by checkStoredSize.
func (s *Service) checkEntity(e api.Entity) *spec.Error {
	if e.Absent&(api.AbsentPartitionKey|api.AbsentRowKey) != 0 {
		// An entity without both keys (E-insert-no-keys).
		return spec.ErrPropertiesNeedValue.New()
	}
	if err := checkKey(e.PartitionKey); err != nil {
		return err
	}
	if err := checkKey(e.RowKey); err != nil {
		return err
	}
	count, failed := 0, false
	for name, v := range e.Properties {
		if storedProperty(name, v) {
			count++
		}
		if !failed {
			failed = checkProperty(name, v, s.names.Known(name), s.propertyLimits.MaxPropertyNameLength) != nil
		}
	}
	if count > s.propertyLimits.MaxCustomProperties {
		return spec.ErrTooManyProperties.New()
	}
	if !failed {
		return nil
	}
	names := make([]string, 0, len(e.Properties))
	for name := range e.Properties {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if err := checkProperty(name, e.Properties[name], false, s.propertyLimits.MaxPropertyNameLength); err != nil {
			if err.Code == spec.ErrPropertyValueTooLarge.Code && api.EntitySize(e) > spec.MaxEntityBytes {
				// Storage judges the entity's size before its values' sizes
				// (EVIDENCE.md 13, E-entity-size-first).
				return spec.ErrEntityTooLarge.New()
			}
			return err
		}
	}
	return nil
}

// checkListedEntity is checkEntity of an entity whose properties are listed in name order
// (api.ListedEntity): the same checks in the same order, so the same error. For a valid e
// it returns its size (api.EntitySize's, reckoned as its keys and values are checked), and
// ids with, for each property, store.Skip if it
// is not stored (storedProperty), else the id of its name (store.NoID for a name not
// interned yet) appended: the store.Listed of e.
func (s *Service) checkListedEntity(e *api.ListedEntity, ids []uint32) (int, []uint32, *spec.Error) {
	if e.Absent&(api.AbsentPartitionKey|api.AbsentRowKey) != 0 {
		return 0, nil, spec.ErrPropertiesNeedValue.New()
	}
	pkUnits, err := checkKeyUnits(e.PartitionKey)
	if err != nil {
		return 0, nil, err
	}
	rkUnits, err := checkKeyUnits(e.RowKey)
	if err != nil {
		return 0, nil, err
	}
	// A name the store knows was valid when first stored: checking it again would give
	// nothing, so the first failure in name order is checkEntity's. The count of stored
	// properties is judged before any of them.
	count, size := 0, spec.SizeEntityOverhead+2*(pkUnits+rkUnits) // api.KeysSize
	var first *spec.Error
	for i := range e.Properties {
		p := &e.Properties[i]
		if p.Name == timestampName {
			ids = append(ids, store.Skip) // ignored, see storedProperty
			continue
		}
		id, nameUnits, known := s.names.Interned(p.Name)
		switch {
		case p.Value.Null:
			id = store.Skip
		case !known:
			id = store.NoID
		}
		ids = append(ids, id)
		if !p.Value.Null {
			count++
		}
		if first != nil {
			continue
		}
		if !known {
			if first = checkPropertyName(p.Name, s.propertyLimits.MaxPropertyNameLength); first != nil {
				continue
			}
		}
		if p.Value.Null {
			continue
		}
		var valueSize int
		valueSize, first = checkValueSize(p.Value)
		if !known {
			nameUnits = api.UTF16Len(p.Name)
		}
		size += api.PropertySizeFrom(nameUnits, valueSize)
	}
	if count > s.propertyLimits.MaxCustomProperties {
		return 0, nil, spec.ErrTooManyProperties.New()
	}
	if first != nil {
		if first.Code == spec.ErrPropertyValueTooLarge.Code && listedEntitySize(e) > spec.MaxEntityBytes {
			return 0, nil, spec.ErrEntityTooLarge.New() // as checkEntity (E-entity-size-first)
		}
		return 0, nil, first
	}
	return size, ids, nil
}

// checkValueSize is checkValue that also returns the value's size (api.ValueSize), a String
// read once for both.
func checkValueSize(v api.Value) (int, *spec.Error) {
	if v.Type != api.EdmString {
		return api.ValueSize(v), checkValue(v)
	}
	units, ok := stringUnits(v.Str)
	if !ok {
		return 0, errInvalidValue()
	}
	if units > spec.MaxStoredStringUnits {
		return 0, spec.ErrPropertyValueTooLarge.New()
	}
	return api.StringSize(units), nil
}

// stringUnits returns the length of s in UTF-16 code units (api.UTF16Len) and whether s is
// valid UTF-8, reading an ASCII s once, thirty-two bytes at a time.
func stringUnits(s string) (int, bool) {
	i := 0
	for ; i+32 <= len(s); i += 32 {
		b := s[i : i+32]
		if (word(b[:8])|word(b[8:16])|word(b[16:24])|word(b[24:]))&highBits != 0 {
			break
		}
	}
	for ; i+8 <= len(s); i += 8 {
		if word(s[i:i+8])&highBits != 0 {
			break
		}
	}
	if i < len(s) && len(s) >= 8 && i+8 > len(s) && word(s[len(s)-8:])&highBits == 0 {
		return len(s), true // the last eight bytes, overlapping those read, are ASCII too
	}
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			rest := s[i:]
			if !utf8.ValidString(rest) {
				return 0, false
			}
			return i + api.UTF16Len(rest), true
		}
	}
	return len(s), true
}

// highBits has the high bit of each byte of a word set.
const highBits = 0x8080808080808080

// word returns the first eight bytes of s as a little-endian word.
func word(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// listedEntitySize is api.EntitySize of the entity e lists.
func listedEntitySize(e *api.ListedEntity) int {
	size := api.KeysSize(e.PartitionKey, e.RowKey)
	for i := range e.Properties {
		if p := &e.Properties[i]; storedProperty(p.Name, p.Value) {
			size += api.PropertySize(p.Name, p.Value)
		}
	}
	return size
}

// checkStoredSize validates the entity that would be stored (after a merge), given its
// number of stored properties and its size (EntitySize), against the Service's limit of
// custom properties.
func checkStoredSize(count, size, maxCustomProperties int) *spec.Error {
	if count > maxCustomProperties {
		return spec.ErrTooManyProperties.New()
	}
	if size > spec.MaxEntityBytes {
		return spec.ErrEntityTooLarge.New()
	}
	return nil
}

// EntitySize returns the size of the entity with keys pk, rk and properties props by the
// documented accounting (SIZEBLOG, EVIDENCE.md 1.4; the spec.Size* constants): 4 bytes, twice
// the UTF-16 length of both keys, and for each stored property 8 bytes, twice the UTF-16
// length of its name and the size of its value. Null properties and a Timestamp are not
// stored and do not count. The reference refuses an entity above spec.MaxEntityBytes.
func EntitySize(pk, rk string, props map[string]api.Value) int {
	return api.EntitySize(api.Entity{PartitionKey: pk, RowKey: rk, Properties: props})
}

// checkIfMatch validates an If-Match value: "*" or a quoted entity tag, weak or strong.
func checkIfMatch(etag string) *spec.Error {
	if etag == api.IfMatchAny {
		return nil
	}
	tag := strings.TrimPrefix(etag, "W/")
	if len(tag) < 2 || tag[0] != '"' || tag[len(tag)-1] != '"' || strings.Contains(tag[1:len(tag)-1], `"`) {
		return errMalformedETag(etag)
	}
	return nil
}

// jsonSizeLowerBound returns a lower bound of the size of e's JSON body and request line in
// a transaction, for the payload estimate: every byte counted here is certainly sent.
func jsonSizeLowerBound(e api.Entity) int {
	n := 2*(len(e.PartitionKey)+len(e.RowKey)) + len(`{"PartitionKey":"","RowKey":""}`)
	for name, v := range e.Properties {
		n += len(name) + len(`"":,`)
		switch v.Type {
		case api.EdmString:
			n += len(v.Str) + 2
		case api.EdmBinary:
			n += (len(v.Bin())+2)/3*4 + 2
		default:
			n++
		}
	}
	return n
}
