package wire

import (
	"strings"
	"testing"
)

// trimSpace answers as strings.TrimSpace does, on ASCII and multi-byte white space at
// either end and on bytes that only look like it.
func TestTrimSpaceMatchesStrings(t *testing.T) {
	for _, s := range []string{
		"", " ", "a", " a", "a ", "\ta\n", "\u00a0a", "a\u00a0", "\u0085a\u0085", "\u3000", "a\u3000b",
		"\x01a\x01", "\x7fa\x7f", "é", "\xff", "a\xff", "PartitionKey", " RowKey ", "\v\f\r",
	} {
		if got, want := trimSpace(s), strings.TrimSpace(s); got != want {
			t.Errorf("trimSpace(%q) = %q, want %q", s, got, want)
		}
	}
}
