package odata

import (
	"strings"
	"testing"
)

func TestTokens(t *testing.T) {
	for _, c := range []struct {
		filter string
		want   string // kind:text, space-separated
	}{
		{"PartitionKey eq 'a b' and not (N ge 5L)", "w:PartitionKey w:eq l:'a b' w:and w:not o:( w:N w:ge l:5L c:)"},
		{"Name eq 'it''s'", "w:Name w:eq l:'it''s'"},
		{"T lt datetime'2020-01-01T00:00:00Z' or G eq guid'c9da6455-213d-42c9-9a79-3e9149a57833'", "w:T w:lt l:datetime'2020-01-01T00:00:00Z' w:or w:G w:eq l:guid'c9da6455-213d-42c9-9a79-3e9149a57833'"},
		{"B eq X'0aFF' and D gt -1.5", "w:B w:eq l:X'0aFF' w:and w:D w:gt l:-1.5"},
		// Refused words: a bad typed literal, an unterminated string, a stray character.
		{"T eq datetime'nope' and A EQ 1", "w:T w:eq x:datetime'nope' w:and w:A w:EQ l:1"},
		{"A eq 'open", "w:A w:eq x:'open"},
		{"A eq 1 ; B", "w:A w:eq l:1 x:; w:B"},
		{"", ""},
	} {
		var got []string
		for _, tok := range Tokens(c.filter) {
			got = append(got, string("?wlocx"[tok.Kind])+":"+tok.Text)
			if c.filter[tok.Start:tok.End] != tok.Text {
				t.Errorf("%q: token %q at %d..%d", c.filter, tok.Text, tok.Start, tok.End)
			}
		}
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("Tokens(%q)\n got %s\nwant %s", c.filter, g, c.want)
		}
	}
}
