package wire

import (
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/tableconform/conform/reference/spec"
)

// EntityPath returns the URL path segment that names one entity,
// `table(PartitionKey='pk',RowKey='rk')`, with every single quote in a key doubled and the
// keys percent-encoded (EVIDENCE.md 1.2, CONFIRMED-SDK). The quotes, commas and parentheses of
// the frame stay literal, as Storage writes them in Location headers.
func EntityPath(table, partitionKey, rowKey string) string {
	var room [128]byte
	return string(AppendEntityPath(room[:0], table, partitionKey, rowKey))
}

// AppendEntityPath appends EntityPath(table, partitionKey, rowKey) to dst.
func AppendEntityPath(dst []byte, table, partitionKey, rowKey string) []byte {
	dst = append(dst, table...)
	dst = append(dst, "(PartitionKey='"...)
	dst = appendEscapedKey(dst, partitionKey)
	dst = append(dst, "',RowKey='"...)
	dst = appendEscapedKey(dst, rowKey)
	return append(dst, "')"...)
}

// TablePath returns the URL path segment that names one table, `Tables('name')`.
func TablePath(name string) string {
	var room [64]byte
	b := append(room[:0], "Tables('"...)
	b = appendEscapedKey(b, name)
	return string(append(b, "')"...))
}

// appendEscapedKey appends s with single quotes doubled and everything but unreserved
// characters and the quote itself percent-encoded. Runs of unreserved characters are
// appended whole.
func appendEscapedKey(dst []byte, s string) []byte {
	for len(s) > 0 {
		n := 0
		for n < len(s) && unreservedKeyByte[s[n]] {
			n++
		}
		dst = append(dst, s[:n]...)
		if n == len(s) {
			break
		}
		if c := s[n]; c == '\'' {
			dst = append(dst, '\'', '\'')
		} else {
			dst = append(dst, '%', upperHex[c>>4], upperHex[c&0xF])
		}
		s = s[n+1:]
	}
	return dst
}

// unreservedKeyByte marks the bytes appendEscapedKey appends as they are: RFC 3986's
// unreserved characters.
var unreservedKeyByte = func() (table [256]bool) {
	for c := range table {
		table[c] = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~'
	}
	return table
}()

const upperHex = "0123456789ABCDEF"

// ResourceKind is what a path segment under the account names.
type ResourceKind int

// The resources of the Table service (EVIDENCE.md 2).
const (
	// ResourceTables is `Tables` (Create Table, Query Tables).
	ResourceTables ResourceKind = iota + 1
	// ResourceTable is `Tables('name')` (Delete Table).
	ResourceTable
	// ResourceBatch is `$batch`.
	ResourceBatch
	// ResourceEntitySet is `table` or `table()` (Insert Entity, Query Entities, ACL).
	ResourceEntitySet
	// ResourceEntity is `table(PartitionKey='..',RowKey='..')`.
	ResourceEntity
	// ResourceService is the empty path (service properties and stats).
	ResourceService
)

// Resource is one parsed path segment.
type Resource struct {
	Kind         ResourceKind
	Table        string
	PartitionKey string
	RowKey       string
}

// ParseResource parses the escaped path segment that follows the account (without the
// leading slash), e.g. `Tables`, `Tables('t')`, `$batch`, `t()`,
// `t(PartitionKey='a%27%27b',RowKey='x')`. Percent-escapes are decoded before quoted keys
// are read, so `%27` and `'` are the same character; inside a key `”` stands for one
// quote. A malformed segment fails with 400 InvalidUri, a bad key literal with 400
// InvalidInput.
func ParseResource(escaped string) (Resource, error) {
	if r, ok := parseSentResource(escaped); ok {
		return r, nil
	}
	return parseAnyResource(escaped)
}

// parseSentResource is parseAnyResource, in one pass, of the forms the SDKs send for an
// entity set and an entity, `table` and `table(PartitionKey='pk',RowKey='rk')`, with no
// percent-escape, slash or quote in the keys: ok false leaves every other form, and every
// error, to parseAnyResource, which reads these forms to the same Resource.
func parseSentResource(escaped string) (r Resource, ok bool) {
	const pkOpen, rkOpen, keysClose = "(PartitionKey='", "',RowKey='", "')"
	i := 0
	for i < len(escaped) && tableNameByte[escaped[i]] {
		i++
	}
	name := escaped[:i]
	if name == "" || name == "Tables" || name == "$batch" {
		return Resource{}, false
	}
	if i == len(escaped) {
		return Resource{Kind: ResourceEntitySet, Table: name}, true
	}
	rest := escaped[i:]
	if len(rest) < len(pkOpen) || rest[:len(pkOpen)] != pkOpen {
		return Resource{}, false
	}
	rest = rest[len(pkOpen):]
	n := sentKeyEnd(rest)
	if len(rest)-n < len(rkOpen) || rest[n:n+len(rkOpen)] != rkOpen {
		return Resource{}, false
	}
	pk, rest := rest[:n], rest[n+len(rkOpen):]
	if n = sentKeyEnd(rest); rest[n:] != keysClose {
		return Resource{}, false
	}
	return Resource{Kind: ResourceEntity, Table: name, PartitionKey: pk, RowKey: rest[:n]}, true
}

// sentKeyEnd is the index of the first quote, percent sign or slash in s, or len(s).
func sentKeyEnd(s string) int {
	i := 0
	for i < len(s) && !keyEndByte[s[i]] {
		i++
	}
	return i
}

// keyEndByte marks the bytes sentKeyEnd stops at.
var keyEndByte = [256]bool{'\'': true, '%': true, '/': true}

// tableNameByte marks the bytes plainName accepts.
var tableNameByte = func() (table [256]bool) {
	for c := range table {
		table[c] = plainName(string(rune(c)))
	}
	return table
}()

// parseAnyResource is ParseResource of any segment.
func parseAnyResource(escaped string) (Resource, error) {
	if escaped == "" {
		return Resource{Kind: ResourceService}, nil
	}
	if strings.Contains(escaped, "/") {
		return Resource{}, invalidURI(escaped)
	}
	seg := escaped
	if strings.IndexByte(escaped, '%') >= 0 { // what url.PathUnescape changes
		var err error
		if seg, err = url.PathUnescape(escaped); err != nil {
			return Resource{}, invalidURI(escaped)
		}
	}
	switch seg {
	case "Tables", "Tables()":
		return Resource{Kind: ResourceTables}, nil
	case "$batch":
		return Resource{Kind: ResourceBatch}, nil
	}
	open := strings.IndexByte(seg, '(')
	if open < 0 {
		if !plainName(seg) {
			return Resource{}, invalidURI(escaped)
		}
		return Resource{Kind: ResourceEntitySet, Table: seg}, nil
	}
	name, args := seg[:open], seg[open+1:]
	if !strings.HasSuffix(args, ")") || !plainName(name) {
		return Resource{}, invalidURI(escaped)
	}
	args = args[:len(args)-1]
	if name == "Tables" {
		v, rest, err := quoted(args)
		if err != nil || rest != "" {
			return Resource{}, invalidURI(escaped)
		}
		return Resource{Kind: ResourceTable, Table: v}, nil
	}
	if args == "" {
		return Resource{Kind: ResourceEntitySet, Table: name}, nil
	}
	pk, rk, err := entityKeys(args, escaped)
	if err != nil {
		return Resource{}, err
	}
	return Resource{Kind: ResourceEntity, Table: name, PartitionKey: pk, RowKey: rk}, nil
}

// entityKeys reads the keys of `PartitionKey='pk',RowKey='rk'` in any order, with white
// space around the names, the comma and the literals, for ParseResource of escaped.
func entityKeys(args, escaped string) (pk, rk string, err error) {
	var havePK, haveRK bool
	for args != "" {
		eq := strings.IndexByte(args, '=')
		if eq < 0 {
			return "", "", invalidURI(escaped)
		}
		key := trimSpace(args[:eq])
		v, rest, bad := quoted(args[eq+1:])
		if bad != nil {
			return "", "", bad
		}
		switch {
		case key == PropPartitionKey && !havePK:
			pk, havePK = v, true
		case key == PropRowKey && !haveRK:
			rk, haveRK = v, true
		default:
			return "", "", invalidURI(escaped)
		}
		rest = trimSpace(rest)
		if rest == "" {
			break
		}
		if rest[0] != ',' {
			return "", "", invalidURI(escaped)
		}
		args = trimSpace(rest[1:])
		if args == "" {
			return "", "", invalidURI(escaped)
		}
	}
	if !havePK || !haveRK {
		return "", "", invalidURI(escaped)
	}
	return pk, rk, nil
}

// quoted reads a single-quoted literal at the start of s (” is one quote) and returns its
// value and the text after it.
func quoted(s string) (value, rest string, err error) {
	s = strings.TrimLeft(s, " ")
	if !strings.HasPrefix(s, "'") {
		return "", "", spec.ErrInvalidInput.Newf("A key must be a quoted string literal.")
	}
	if i := strings.IndexByte(s[1:], '\'') + 1; i > 0 {
		if i+1 < len(s) && s[i+1] == '\'' {
			return quotedWithQuotes(s)
		}
		return s[1:i], s[i+1:], nil // no doubled quote: the value is s's own text
	}
	return "", "", spec.ErrInvalidInput.Newf("A key literal is not terminated.")
}

// trimSpace is strings.TrimSpace, answered without a call when s begins and ends with
// bytes that are neither ASCII white space nor part of a multi-byte rune.
func trimSpace(s string) string {
	if s == "" || s[0] > ' ' && s[0] < utf8.RuneSelf && s[len(s)-1] > ' ' && s[len(s)-1] < utf8.RuneSelf {
		return s
	}
	return strings.TrimSpace(s)
}

// quotedWithQuotes is quoted for a literal with a doubled quote inside.
func quotedWithQuotes(s string) (value, rest string, err error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] != '\'' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '\'' {
			b.WriteByte('\'')
			i++
			continue
		}
		return b.String(), s[i+1:], nil
	}
	return "", "", spec.ErrInvalidInput.Newf("A key literal is not terminated.")
}

func plainName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '$' || c == '.') {
			return false
		}
	}
	return true
}

func invalidURI(seg string) error {
	if len(seg) > 80 {
		seg = seg[:80] + "..."
	}
	return spec.ErrInvalidURI.Newf("The requested URI does not represent any resource on the server: %s", seg)
}

// FormatKeyLiteral renders s as an OData string literal, 'text' with quotes doubled, for use
// in $filter expressions (EVIDENCE.md 3.1).
func FormatKeyLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
