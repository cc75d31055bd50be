package replay

import (
	"net"
	"net/url"
	"regexp"
	"strings"

	"github.com/tableconform/conform/reference/wire"
)

// validTableName is the service's rule for table names (EVIDENCE.md 2.1).
var validTableName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]{2,62}$`)

// runTablePrefix matches the prefix of the tables a conform run creates ("cf" and a run id
// of 8 letters and digits).
var runTablePrefix = regexp.MustCompile(`^(?i)cf[a-z0-9]{8}`)

// table returns the live name of a recorded table name, assigning one on first use. The
// live name keeps what the service judges: a name that is not valid is sent as recorded (it
// creates nothing), and a valid one keeps its length where it is at the limit. A conform
// run's prefix is replaced by the replay's (both 10 characters); any other name gets the
// replay's prefix in front, trimmed from its start to at most 63 characters. The case of
// each mention is kept.
func (s *state) table(recorded string) string {
	k := strings.ToLower(recorded)
	if !validTableName.MatchString(recorded) || k == "tables" {
		return recorded
	}
	var live string
	switch {
	case runTablePrefix.MatchString(recorded) && len(s.prefix) == 10:
		live = s.prefix + recorded[10:]
	case len(s.prefix)+len(recorded) > 63:
		live = s.prefix + recorded[len(s.prefix)+len(recorded)-63:]
	default:
		live = s.prefix + recorded
	}
	if prev, ok := s.tables[k]; ok && !strings.EqualFold(prev, live) {
		return prev
	}
	s.tables[k] = live
	s.back[strings.ToLower(live)] = recorded
	return live
}

// recordedName maps a live table name back to its recorded name; ok is false for a table
// of another run or recording.
func (s *state) recordedName(live string) (string, bool) {
	n, ok := s.back[strings.ToLower(live)]
	return n, ok
}

// resourceOf splits a recorded URI into the path relative to the table endpoint (the account
// segment of a path-style URI removed) and the query.
func resourceOf(raw string) (path string, q url.Values) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", url.Values{}
	}
	p := u.EscapedPath()
	if pathStyle(u.Host) {
		p = strings.TrimPrefix(p, "/")
		if i := strings.IndexByte(p, '/'); i >= 0 {
			p = p[i:]
		} else {
			p = ""
		}
	}
	return strings.TrimPrefix(p, "/"), u.Query()
}

// pathStyle reports whether a host puts the account in the path (emulators, IP addresses).
func pathStyle(host string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	return net.ParseIP(h) != nil || strings.EqualFold(h, "localhost") || !strings.Contains(h, ".")
}

// tableOfPath returns the table a relative path names: "t", "t()", "t(PartitionKey=...)",
// "Tables('t')"; "" for Tables, $batch and the service.
func tableOfPath(p string) string {
	p, _ = url.PathUnescape(p)
	seg, _, _ := strings.Cut(p, "/")
	switch {
	case seg == "" || strings.HasPrefix(seg, "$"):
		return ""
	case strings.HasPrefix(strings.ToLower(seg), "tables("):
		inner := strings.TrimSuffix(seg[len("tables("):], ")")
		return strings.Trim(inner, "'")
	case strings.EqualFold(seg, "tables"):
		return ""
	}
	name, _, _ := strings.Cut(seg, "(")
	return name
}

// rewritePath renames the table of a relative path.
func (s *state) rewritePath(p string) string {
	t := tableOfPath(p)
	if t == "" {
		return p
	}
	live := s.table(t)
	unescaped, _ := url.PathUnescape(p)
	if i := strings.Index(strings.ToLower(unescaped), "tables('"+strings.ToLower(t)+"')"); i == 0 {
		return escapePath("Tables('" + live + "')" + unescaped[len("Tables('"+t+"')"):])
	}
	return escapePath(live + unescaped[len(t):])
}

// escapePath escapes a relative path as the SDKs do: quotes and parentheses kept, the rest of
// what is not allowed in a path segment percent-encoded.
func escapePath(p string) string {
	u := url.URL{Path: "/" + p}
	e := u.EscapedPath()
	e = strings.NewReplacer("%27", "'", "%28", "(", "%29", ")").Replace(e)
	return strings.TrimPrefix(e, "/")
}

var quotedRunPrefix = regexp.MustCompile(`(?i)'cf[a-z0-9]{8}`)

// rewriteQuoted renames recorded table names quoted in a filter ('name'), and swaps a conform
// run's prefix at the start of any quoted literal (a range of a run's tables) for the
// replay's.
func (s *state) rewriteQuoted(f string) string {
	for k, live := range s.tables {
		re := regexp.MustCompile(`(?i)'` + regexp.QuoteMeta(k) + `'`)
		f = re.ReplaceAllLiteralString(f, "'"+live+"'")
	}
	if len(s.prefix) == 10 {
		f = quotedRunPrefix.ReplaceAllStringFunc(f, func(lit string) string {
			if strings.HasPrefix(strings.ToLower(lit[1:]), strings.ToLower(s.prefix)) {
				return lit
			}
			return "'" + s.prefix
		})
	}
	return f
}

// tableNameLiteral is a comparison of TableName with a string literal in a Query Tables
// filter ("TableName ge 'mytable'", either side).
var tableNameLiteral = regexp.MustCompile(`(?i)(\bTableName\s+(?:eq|ne|gt|ge|lt|le)\s+)'((?:[^']|'')*)'|'((?:[^']|'')*)'(\s+(?:eq|ne|gt|ge|lt|le)\s+TableName\b)`)

// rewriteTableNameLiterals gives every literal a Query Tables filter compares TableName with
// the replay's prefix, as the tables of the recording got it: a range of names
// ("TableName ge 'pytables' and TableName lt 'pytablet'") then selects the replay's tables
// the recording's selected. A literal already renamed (a recorded table, rewriteQuoted) is
// left as it is.
func (s *state) rewriteTableNameLiterals(f string) string {
	return tableNameLiteral.ReplaceAllStringFunc(f, func(m string) string {
		sub := tableNameLiteral.FindStringSubmatch(m)
		lit, before, after := sub[2], sub[1], ""
		if sub[1] == "" {
			lit, after = sub[3], sub[4]
		}
		if _, known := s.back[strings.ToLower(lit)]; !known {
			lit = s.prefixed(lit)
		}
		return before + "'" + lit + "'" + after
	})
}

// prefixed is a name with the replay's prefix, as table gives a recorded table name, for a
// literal that need not be a valid table name ("pytablet", "mytable{").
func (s *state) prefixed(lit string) string {
	if live, ok := s.tables[strings.ToLower(lit)]; ok {
		return live
	}
	if runTablePrefix.MatchString(lit) && len(s.prefix) == 10 {
		return s.prefix + lit[10:]
	}
	return s.prefix + lit
}

var datetimeLiteral = regexp.MustCompile(`(?i)datetime'([^']+)'`)

// rewriteTimes replaces, in a filter, every datetime literal that is a Timestamp the recorded
// service answered with the Timestamp the target gave the same entity.
func (s *state) rewriteTimes(f string) string {
	if len(s.times) == 0 {
		return f
	}
	return datetimeLiteral.ReplaceAllStringFunc(f, func(lit string) string {
		m := datetimeLiteral.FindStringSubmatch(lit)
		t, err := wire.ParseDateTime(m[1])
		if err != nil {
			return lit
		}
		live, ok := s.times[t.UnixNano()]
		if !ok {
			return lit
		}
		return "datetime'" + live.UTC().Format("2006-01-02T15:04:05.0000000Z") + "'"
	})
}

// rewriteBatch points each part's request line at the target and renames its table; ETags
// in the parts' If-Match headers are mapped to the live ones.
func (s *state) rewriteBatch(body []byte, endpoint string) []byte {
	out := batchRequestLine.ReplaceAllStringFunc(string(body), func(line string) string {
		m := batchRequestLine.FindStringSubmatch(line)
		raw := m[2]
		p, q := resourceOf(raw)
		if !strings.Contains(raw, "://") {
			p, q = strings.TrimPrefix(raw, "/"), url.Values{}
			if before, query, ok := strings.Cut(p, "?"); ok {
				p = before
				q, _ = url.ParseQuery(query)
			}
		}
		for _, k := range sasParams {
			q.Del(k)
		}
		u := endpoint + "/" + s.rewritePath(p)
		if enc := encodeQuery(q); enc != "" {
			u += "?" + enc
		}
		return m[1] + " " + u + " " + m[3]
	})
	ifMatch := regexp.MustCompile(`(?mi)^(If-Match: *)(.*?)(\r?)$`)
	out = ifMatch.ReplaceAllStringFunc(out, func(line string) string {
		m := ifMatch.FindStringSubmatch(line)
		return m[1] + s.etag(m[2]) + m[3]
	})
	return []byte(out)
}

func (s *state) etag(v string) string {
	if l, ok := s.etags[v]; ok {
		return l
	}
	return v
}

func (s *state) token(v string) string {
	if l, ok := s.tokens[v]; ok {
		return l
	}
	if _, ok := s.tables[strings.ToLower(v)]; ok {
		return s.table(v)
	}
	return v
}
