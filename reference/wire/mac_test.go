package wire

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"hash/maphash"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"
)

// The reused HMAC states sign exactly as fresh ones, for every key, however often and
// past the bound on cached keys.
func TestSignWithReusedStatesMatchesFreshHMAC(t *testing.T) {
	fresh := func(key []byte, sts string) string {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(sts))
		return base64.StdEncoding.EncodeToString(m.Sum(nil))
	}
	for i := range maxCachedKeys + 8 {
		key := []byte("key-" + strconv.Itoa(i))
		for j := range 3 {
			sts := "GET\n\n\nSun, 22 Nov 2026 15:00:0" + strconv.Itoa(j) + " GMT\n/acct/t()"
			if got, want := Sign(key, sts), fresh(key, sts); got != want {
				t.Fatalf("key %d, round %d: Sign = %s, want %s", i, j, got, want)
			}
		}
	}
}

// AppendSharedKeyAuthorization signs what SignRequest signs.
func TestAppendSharedKeyAuthorizationMatchesSignRequest(t *testing.T) {
	key := []byte("0123456789abcdef")
	now := time.Date(2026, 11, 22, 15, 0, 0, 0, time.UTC)
	for _, scheme := range []AuthScheme{SharedKey, SharedKeyLite} {
		for _, target := range []string{"http://h/acct/t(PartitionKey='a',RowKey='b')", "http://h/acct/t?comp=acl", "http://h/acct/t()?$filter=x%20eq%201"} {
			r, err := http.NewRequest(http.MethodPut, target, nil)
			if err != nil {
				t.Fatal(err)
			}
			r.Header.Set(HeaderContentType, ContentTypeJSON)
			SignRequest(r, scheme, "acct", key, now)
			got := AppendSharedKeyAuthorization(nil, scheme, "acct", key, http.MethodPut, "", ContentTypeJSON, HTTPDate(now), r.URL.EscapedPath(), r.URL.RawQuery)
			if want := r.Header.Get(HeaderAuthorization); string(got) != want {
				t.Errorf("%v %s: %s, SignRequest %s", scheme, target, got, want)
			}
		}
	}
}

// Only the exact signature verifies: not a longer one that starts with it, nor a prefix.
func TestVerifySharedKeyWantsTheWholeSignature(t *testing.T) {
	r, verify := signedTestQuery(t, SharedKey)
	auth := r.Header.Get(HeaderAuthorization)
	for _, tc := range []struct {
		auth string
		ok   bool
	}{{auth, true}, {auth + "A", false}, {auth + "==", false}, {auth[:len(auth)-1], false}, {auth[:len(auth)-20], false}} {
		r.Header.Set(HeaderAuthorization, tc.auth)
		if err := verify(); (err == nil) != tc.ok {
			t.Errorf("%q: %v", tc.auth, err)
		}
	}
}

// A server that has parsed the query verifies what VerifySharedKey verifies: the comp
// parameter, escaped or not, is signed; other parameters are not.
func TestVerifySharedKeyQueryAgreesWithVerifySharedKey(t *testing.T) {
	key := []byte("0123456789abcdef")
	now := time.Date(2026, 11, 22, 15, 0, 0, 0, time.UTC)
	keys := func(a string) ([]byte, bool) { return key, a == "acct" }
	for _, target := range []string{"http://h/acct/t?comp=acl", "http://h/acct/t?%63omp=acl&timeout=5", "http://h/acct/t()?%24filter=x%20eq%201", "http://h/acct/t?timeout=5&comp=acl&comp=x"} {
		for _, signedAs := range []string{target, "http://h/acct/t"} {
			signed, err := http.NewRequest(http.MethodGet, signedAs, nil)
			if err != nil {
				t.Fatal(err)
			}
			SignRequest(signed, SharedKeyLite, "acct", key, now)
			r, _ := http.NewRequest(http.MethodGet, target, nil)
			r.Header = signed.Header
			q, err := url.ParseQuery(r.URL.RawQuery)
			if err != nil {
				t.Fatal(err)
			}
			_, want := VerifySharedKey(r.Method, r.Header, r.URL.EscapedPath(), r.URL.RawQuery, keys, now)
			_, got := VerifySharedKeyQuery(r.Method, r.Header, r.URL.EscapedPath(), r.URL.RawQuery, q, keys, now)
			if (got == nil) != (want == nil) {
				t.Errorf("%s signed as %s: VerifySharedKeyQuery %v, VerifySharedKey %v", target, signedAs, got, want)
			}
			if signedAs == target && got != nil {
				t.Errorf("%s: %v", target, got)
			}
		}
	}
}

// A signature the cache of verified texts holds verifies that text under its key only: the
// same request signed with another key, or the same key with another date, is refused,
// however often the valid one was verified before.
func TestVerifiedSignaturesAreKeptPerKeyAndText(t *testing.T) {
	keyA, keyB := []byte("0123456789abcdef"), []byte("fedcba9876543210")
	now := time.Date(2026, 11, 22, 15, 0, 0, 0, time.UTC)
	for _, owner := range [][]byte{keyA, keyB} {
		keys := func(a string) ([]byte, bool) { return owner, a == "acct" }
		for _, signer := range [][]byte{keyA, keyB} {
			for _, at := range []time.Time{now, now.Add(time.Second)} {
				r, err := http.NewRequest(http.MethodGet, "http://h/acct/t()", nil)
				if err != nil {
					t.Fatal(err)
				}
				SignRequest(r, SharedKeyLite, "acct", signer, at)
				for range 3 {
					_, err := VerifySharedKey(r.Method, r.Header, r.URL.EscapedPath(), r.URL.RawQuery, keys, now)
					if ok := string(signer) == string(owner); (err == nil) != ok {
						t.Fatalf("key %s signed for key %s at %v: %v, want ok=%v", signer, owner, at, err, ok)
					}
				}
				// The signature of one date does not verify a request of another.
				other := r.Clone(r.Context())
				other.Header.Set(KeyMSDate, HTTPDate(at.Add(time.Minute)))
				if _, err := VerifySharedKey(other.Method, other.Header, other.URL.EscapedPath(), other.URL.RawQuery, keys, now.Add(time.Minute)); err == nil {
					t.Fatalf("a signature of %v verified a request dated a minute later", at)
				}
			}
		}
	}
}

// Texts that fall in one set of the cache are each signed correctly, and the set keeps as
// many of them as it has slots: alternating between two resources signs each once.
func TestVerifiedSignaturesShareASet(t *testing.T) {
	c := &signatureCache{seed: maphash.MakeSeed()}
	key := []byte("0123456789abcdef")
	set := func(text string) uint64 { return maphash.String(c.seed, text) & (signatureSets - 1) }
	var texts []string
	for i := 0; len(texts) < signatureWays+1; i++ {
		if text := "date\n/acct/t" + strconv.Itoa(i); len(texts) == 0 || set(text) == set(texts[0]) {
			texts = append(texts, text)
		}
	}
	want := func(text string) string {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(text))
		return base64.StdEncoding.EncodeToString(m.Sum(nil))
	}
	held := func(text string) bool {
		for i := range c.sets[set(text)].slots {
			if s := c.sets[set(text)].slots[i].Load(); s != nil && string(s.text) == text {
				return true
			}
		}
		return false
	}
	for round := range 3 {
		for _, text := range texts[:signatureWays] {
			if got := string(c.signature(key, []byte(text))[:]); got != want(text) {
				t.Fatalf("round %d: signature of %q = %s, want %s", round, text, got, want(text))
			}
		}
	}
	for _, text := range texts[:signatureWays] {
		if !held(text) {
			t.Errorf("%q is not held by its set", text)
		}
	}
	// One more text takes the slot used least recently.
	if got := string(c.signature(key, []byte(texts[signatureWays]))[:]); got != want(texts[signatureWays]) {
		t.Fatalf("signature of %q = %s", texts[signatureWays], got)
	}
	if held(texts[0]) || !held(texts[signatureWays-1]) || !held(texts[signatureWays]) {
		t.Error("the new text did not take the slot used least recently")
	}
}

// A signature that differs from the right one in any single character is refused.
func TestVerifySharedKeyRefusesEveryAlteredCharacter(t *testing.T) {
	r, verify := signedTestQuery(t, SharedKeyLite)
	auth := r.Header.Get(HeaderAuthorization)
	sig := len(auth) - signatureLen
	for i := sig; i < len(auth); i++ {
		b := []byte(auth)
		b[i] ^= 1
		r.Header.Set(HeaderAuthorization, string(b))
		if err := verify(); err == nil {
			t.Errorf("a signature altered at character %d verified", i-sig)
		}
	}
}

// signedTestQuery is a query of table t signed with scheme by account acct's key, and
// verify, which checks the Authorization the request then holds, at the time it was signed.
func signedTestQuery(t *testing.T, scheme AuthScheme) (r *http.Request, verify func() error) {
	t.Helper()
	key := []byte("0123456789abcdef")
	now := time.Date(2026, 11, 22, 15, 0, 0, 0, time.UTC)
	keys := func(a string) ([]byte, bool) { return key, a == "acct" }
	r, err := http.NewRequest(http.MethodGet, "http://h/acct/t()", nil)
	if err != nil {
		t.Fatal(err)
	}
	SignRequest(r, scheme, "acct", key, now)
	return r, func() error {
		_, err := VerifySharedKey(r.Method, r.Header, r.URL.EscapedPath(), r.URL.RawQuery, keys, now)
		return err
	}
}

// Requests verified at once, whose texts share a set of the cache and take each other's
// slots, are each verified against their own text only (run with -race).
func TestVerifiedSignaturesUnderConcurrentUse(t *testing.T) {
	c := &signatureCache{seed: maphash.MakeSeed()}
	key := []byte("0123456789abcdef")
	set := func(text string) uint64 { return maphash.String(c.seed, text) & (signatureSets - 1) }
	var texts []string
	for i := 0; len(texts) < signatureWays+2; i++ {
		if text := "date\n/acct/t" + strconv.Itoa(i); len(texts) == 0 || set(text) == set(texts[0]) {
			texts = append(texts, text)
		}
	}
	want := map[string]string{}
	for _, text := range texts {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(text))
		want[text] = base64.StdEncoding.EncodeToString(m.Sum(nil))
	}
	var wg sync.WaitGroup
	errs := make(chan string, len(texts))
	for g, text := range texts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 + g {
				if got := string(c.signature(key, []byte(text))[:]); got != want[text] {
					errs <- text + ": " + got
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
