package tableserver

import (
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/reference/wire"
)

// httpDate renders the Date header; the rendering of the current second is kept, as every
// answer of that second carries it.
func httpDate(t time.Time) string {
	sec := t.Unix()
	if c := lastDate.Load(); c != nil && c.sec == sec {
		return c.text
	}
	c := &dateText{sec: sec, text: t.UTC().Format(http.TimeFormat)}
	lastDate.Store(c)
	return c.text
}

type dateText struct {
	sec  int64
	text string
}

var lastDate atomic.Pointer[dateText]

// answerVersion is the x-ms-version of the answer to a request that sent values: the one
// asked for, as Storage echoes it (E-version-echo), or spec.APIVersion when none was sent;
// ok is false when the values are not one well-formed version.
func answerVersion(values []string) (version string, ok bool) {
	switch {
	case len(values) == 0:
		return spec.APIVersion, true
	case len(values) > 1 || !wellFormedVersion(values[0]):
		return spec.APIVersion, false
	}
	return values[0], true
}

// wellFormedVersion reports whether v has the form of a service version, a date
// YYYY-MM-DD. Storage also refuses dates that name no version; conform accepts any date.
func wellFormedVersion(v string) bool {
	if p := lastVersion.Load(); p != nil && *p == v {
		return true // clients send the same version on every request
	}
	if _, err := time.Parse("2006-01-02", v); err != nil || len(v) != len("2006-01-02") {
		return false
	}
	kept := v
	lastVersion.Store(&kept)
	return true
}

// lastVersion is the latest x-ms-version found well formed.
var lastVersion atomic.Pointer[string]

func visibleASCII(s string, max int) bool {
	if len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// negotiate sets the metadata level of a data answer from Accept and $format.
func (x *exchange) negotiate() error {
	m, err := wire.NegotiateMetadata(x.accept, x.query.Get("$format"))
	if err != nil {
		return err
	}
	x.level = m
	return nil
}

// prefer reads the Prefer header: "return-content", "return-no-content" or "".
func prefer(h interface{ Get(string) string }) string {
	rest := h.Get(wire.HeaderPrefer)
	for rest != "" {
		var p string
		p, rest, _ = strings.Cut(rest, ",")
		p = strings.TrimSpace(p)
		switch {
		case strings.EqualFold(p, "return-content"):
			return "return-content"
		case strings.EqualFold(p, "return-no-content"):
			return "return-no-content"
		}
	}
	return ""
}
