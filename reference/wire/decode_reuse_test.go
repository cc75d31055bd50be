package wire

import (
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Request entities decoded at once, of different sizes and some refused mid-way, each get
// their own keys and properties: the member lists the decoder reuses carry nothing from
// one body into another's entity. Run with -race.
func TestDecodeRequestEntityReusesNothingOfOtherBodies(t *testing.T) {
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 300 {
				id := strconv.Itoa(g) + "-" + strconv.Itoa(i)
				var b strings.Builder
				b.WriteString(`{"PartitionKey":"p` + id + `","RowKey":"r` + id + `"`)
				n := (g*7 + i) % 40 // past the lists kept for reuse, now and then
				for k := range n {
					b.WriteString(`,"P` + strconv.Itoa(k) + `":"` + id + `"`)
				}
				if i%5 == 0 {
					b.WriteString(`,"Bad":`) // refused after its members were read
				}
				b.WriteString("}")
				e, err := DecodeRequestEntity([]byte(b.String()))
				if i%5 == 0 {
					if err == nil {
						t.Errorf("%s: a malformed body was decoded", id)
					}
					continue
				}
				if err != nil {
					t.Errorf("%s: %v", id, err)
					continue
				}
				if e.PartitionKey != "p"+id || e.RowKey != "r"+id || len(e.Properties) != n {
					t.Errorf("%s: decoded %q %q with %d properties, want %d", id, e.PartitionKey, e.RowKey, len(e.Properties), n)
				}
				for name, v := range e.Properties {
					if v.Str != id {
						t.Errorf("%s: property %s = %q", id, name, v.Str)
					}
				}
			}
		}()
	}
	wg.Wait()
}

// quickString agrees with the byte-by-byte reading (bytewiseString) for every kind of byte at every place of
// texts longer and shorter than its words and plainText's blocks.
func TestQuickStringAgreesWithBytewiseReading(t *testing.T) {
	for n := range 110 {
		for at := range n {
			for _, c := range []byte{'"', '\\', 0x00, 0x0f, 0x1f, 0x20, 0x7f, 0x80, 0xc3, 0xff} {
				s := []byte(strings.Repeat("a", n) + `"` + strings.Repeat("b", 9))
				s[at] = c
				end, plain, ok := quickString(s)
				wantEnd, wantPlain, wantOK := bytewiseString(s)
				if end != wantEnd || plain != wantPlain || ok != wantOK {
					t.Errorf("quickString(%q) = %d, %v, %v, want %d, %v, %v", s, end, plain, ok, wantEnd, wantPlain, wantOK)
				}
			}
		}
	}
}

// appendEscapedKey escapes every byte as a byte-by-byte escaper does, in runs of any length.
func TestAppendEscapedKeyEscapesEveryByte(t *testing.T) {
	bytewise := func(s string) string {
		var b []byte
		for i := 0; i < len(s); i++ {
			switch c := s[i]; {
			case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~':
				b = append(b, c)
			case c == '\'':
				b = append(b, '\'', '\'')
			default:
				b = append(b, '%', "0123456789ABCDEF"[c>>4], "0123456789ABCDEF"[c&0xF])
			}
		}
		return string(b)
	}
	for c := range 256 {
		for _, s := range []string{string(rune(0)) + "x", "ab" + string([]byte{byte(c)}) + "cd", string([]byte{byte(c), byte(c)}), "i00-1-000000" + string([]byte{byte(c)})} {
			if got, want := string(appendEscapedKey(nil, s)), bytewise(s); got != want {
				t.Fatalf("appendEscapedKey(%q) = %q, want %q", s, got, want)
			}
		}
	}
}

// TestShortIntegerIsParseInt holds shortInteger to strconv.ParseInt on the integers it
// takes, and to its refusal of those of more than 18 digits and of what is no integer.
func TestShortIntegerIsParseInt(t *testing.T) {
	for _, text := range []string{"0", "-0", "7", "007", "-12", "999999999999999999", "-999999999999999999", "123456789012345678", "1234567890123456789", "-9223372036854775808",
		"", "-", "--1", "+1", "1-", " 1", "1 ", "1.0", "1e3", "0x1", "12a", "a12", "/", ":", "١"} {
		got, ok := shortInteger(text)
		want, err := strconv.ParseInt(text, 10, 64)
		digits := strings.TrimPrefix(text, "-")
		integer := digits != "" && strings.Trim(digits, "0123456789") == ""
		if ok != (integer && len(digits) <= 18) || ok && (err != nil || got != want) {
			t.Errorf("shortInteger(%q) = %d, %v; ParseInt %d, %v", text, got, ok, want, err)
		}
	}
}
