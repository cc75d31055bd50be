package tableserver

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"hash/fnv"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/reference/wire"
)

// The orders in which the Cosmos flavour lists (E-cosmos-order): entities in the order they
// were last written, tables in an order that is neither their names' nor their creation's.
// Both are served by reading the whole answer from the Server, Storage-flavoured and in key
// order, and paging it here, so that the continuation tokens are the flavour's own.

// cosmosEntityPosition is an entity's place in the flavour's order: its last write's
// Timestamp (in ticks of 100 ns), then its keys in Storage's order.
type cosmosEntityPosition struct {
	Ticks        int64  `json:"t"`
	PartitionKey string `json:"p"`
	RowKey       string `json:"r"`
}

func (a cosmosEntityPosition) compare(b cosmosEntityPosition) int {
	if c := cmp.Compare(a.Ticks, b.Ticks); c != 0 {
		return c
	}
	if c := api.CompareKeyStrings(a.PartitionKey, b.PartitionKey); c != 0 {
		return c
	}
	return api.CompareKeyStrings(a.RowKey, b.RowKey)
}

// cosmosToken is an entity query's continuation as Cosmos writes it (E-cosmos-continuation):
// NextPartitionKey is a JSON object on the first page and an array of them after it, and
// NextRowKey is "NA". The flavour's position rides inside, base64-encoded.
type cosmosToken struct {
	Token string            `json:"token"`
	Range map[string]string `json:"range"`
}

func encodeCosmosContinuation(pos cosmosEntityPosition, later bool) string {
	raw, _ := json.Marshal(pos)
	t := cosmosToken{Token: base64.StdEncoding.EncodeToString(raw), Range: map[string]string{"min": "", "max": "FF"}}
	var b []byte
	if later {
		b, _ = json.Marshal([]cosmosToken{t})
	} else {
		b, _ = json.Marshal(t)
	}
	return string(b)
}

func decodeCosmosContinuation(s string) (cosmosEntityPosition, bool) {
	var t cosmosToken
	if strings.HasPrefix(s, "[") {
		var ts []cosmosToken
		if json.Unmarshal([]byte(s), &ts) != nil || len(ts) != 1 {
			return cosmosEntityPosition{}, false
		}
		t = ts[0]
	} else if json.Unmarshal([]byte(s), &t) != nil {
		return cosmosEntityPosition{}, false
	}
	raw, err := base64.StdEncoding.DecodeString(t.Token)
	if err != nil {
		return cosmosEntityPosition{}, false
	}
	var pos cosmosEntityPosition
	if json.Unmarshal(raw, &pos) != nil {
		return cosmosEntityPosition{}, false
	}
	return pos, true
}

// cosmosPageSize returns a query's page size: its $top, or the most a page holds. ok is
// false for a $top the Server refuses or answers itself (absent is fine).
func cosmosPageSize(q url.Values) (int, bool) {
	if !q.Has("$top") {
		return spec.MaxPageSize, true
	}
	n, err := strconv.Atoi(q.Get("$top"))
	if err != nil || n < 1 || n > spec.MaxPageSize {
		return 0, false
	}
	return n, true
}

// innerPages reads every page of a query from the Server: r with query q, followed through
// the continuation headers cont. ok is false when an answer is not a success page, which
// last then is, as it came; otherwise last is the last page's answer (its headers for the
// answer, without the continuation), and items and head are the pages' items and the first
// page's other members.
func (c *Cosmos) innerPages(r *http.Request, q url.Values, cont []string) (items []json.RawMessage, head []member, last *bufferedAnswer, ok bool) {
	for {
		inner := r.Clone(r.Context())
		inner.URL.RawQuery = q.Encode()
		inner.RequestURI = ""
		rec := &bufferedAnswer{header: http.Header{}, status: http.StatusOK}
		c.next.ServeHTTP(rec, inner)
		if rec.status != http.StatusOK {
			return nil, nil, rec, false
		}
		ms, isObject := objectMembers(rec.body.Bytes())
		if !isObject {
			return nil, nil, rec, false
		}
		first := head == nil
		if first {
			head = []member{}
		}
		for _, m := range ms {
			if m.name != "value" {
				if first {
					head = append(head, m)
				}
				continue
			}
			var page []json.RawMessage
			if json.Unmarshal(m.value, &page) != nil {
				return nil, nil, rec, false
			}
			items = append(items, page...)
		}
		more := false
		for _, h := range cont {
			param := strings.TrimPrefix(h, "x-ms-continuation-")
			q.Del(param)
			if v := rec.header.Get(h); v != "" {
				q.Set(param, v)
				more = true
			}
			rec.header.Del(h)
		}
		if !more {
			return items, head, rec, true
		}
	}
}

// withValue renders a query answer: head's members and value.
func withValue(head []member, items []json.RawMessage) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(it)
	}
	b.WriteByte(']')
	return encodeMembers(append([]member{{name: "value", value: b.Bytes()}}, head...))
}

// queryEntities answers an entity query in the order of the entities' last writes, as
// recorded Cosmos answers list a partition's entities in the order they were inserted
// (E-cosmos-order). It reports false, having answered nothing, for a query it leaves to the
// Server as it is (a $top the Server refuses, a continuation not the flavour's).
func (c *Cosmos) queryEntities(w http.ResponseWriter, r *http.Request, id string, a cosmosAnswer) bool {
	q := r.URL.Query()
	size, ok := cosmosPageSize(q)
	if !ok {
		return false
	}
	var from *cosmosEntityPosition
	if next := q.Get("NextPartitionKey"); next != "" {
		pos, ok := decodeCosmosContinuation(next)
		if !ok {
			return false
		}
		from = &pos
	}
	q.Del("$top")
	q.Del("NextPartitionKey")
	q.Del("NextRowKey")
	var added []string
	sel := q.Get("$select")
	if sel != "" {
		named := map[string]bool{}
		for _, n := range strings.Split(sel, ",") {
			named[strings.TrimSpace(n)] = true
		}
		widened := sel
		for _, n := range []string{"PartitionKey", "RowKey", "Timestamp"} {
			if !named[n] {
				widened += "," + n
				added = append(added, n)
			}
		}
		q.Set("$select", widened)
	}
	items, head, rec, ok := c.innerPages(r, q, []string{wire.HeaderNextPartitionKey, wire.HeaderNextRowKey})
	if !ok {
		c.answer(w, r, rec, id, a)
		return true
	}
	type placed struct {
		pos  cosmosEntityPosition
		item json.RawMessage
	}
	all := make([]placed, 0, len(items))
	for _, it := range items {
		var keys struct {
			PartitionKey, RowKey string
			Timestamp            string
		}
		_ = json.Unmarshal(it, &keys)
		var ticks int64
		if ts, err := time.Parse(time.RFC3339Nano, keys.Timestamp); err == nil {
			ticks = ts.UnixNano() / 100
		}
		all = append(all, placed{cosmosEntityPosition{ticks, keys.PartitionKey, keys.RowKey}, it})
	}
	slices.SortStableFunc(all, func(x, y placed) int { return x.pos.compare(y.pos) })
	start := 0
	if from != nil {
		start, _ = slices.BinarySearchFunc(all, *from, func(p placed, t cosmosEntityPosition) int { return p.pos.compare(t) })
		for start < len(all) && all[start].pos.compare(*from) <= 0 {
			start++
		}
	}
	end := min(start+size, len(all))
	page := make([]json.RawMessage, 0, end-start)
	for _, p := range all[start:end] {
		page = append(page, withoutMembers(p.item, added))
	}
	if end < len(all) {
		a.continuation = encodeCosmosContinuation(all[end-1].pos, from != nil)
	}
	if len(added) > 0 {
		// The metadata URL names the projection the client asked for.
		for i, m := range head {
			if m.name == "odata.metadata" {
				head[i].value = bytes.Replace(m.value, []byte(url.QueryEscape(q.Get("$select"))), []byte(url.QueryEscape(sel)), 1)
				head[i].value = bytes.Replace(head[i].value, []byte(q.Get("$select")), []byte(sel), 1)
			}
		}
	}
	rec.body.Reset()
	rec.body.Write(withValue(head, page))
	c.answer(w, r, rec, id, a)
	return true
}

// withoutMembers drops the named members from a JSON object, with their annotations.
func withoutMembers(item json.RawMessage, names []string) json.RawMessage {
	if len(names) == 0 {
		return item
	}
	ms, ok := objectMembers(item)
	if !ok {
		return item
	}
	out := ms[:0]
	for _, m := range ms {
		prop, _, _ := strings.Cut(m.name, "@")
		if !slices.Contains(names, prop) {
			out = append(out, m)
		}
	}
	return encodeMembers(out)
}

// cosmosTableOrderSeed seeds the order in which the flavour lists tables.
const cosmosTableOrderSeed = "conform cosmos tables"

// cosmosTableRank is a table's place in the flavour's listing: a hash of its name, so that
// the order is neither the names' nor their creation's, and is the same on every listing
// and across restarts.
func cosmosTableRank(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(cosmosTableOrderSeed))
	h.Write([]byte(name))
	return h.Sum64()
}

func compareTables(a, b string) int {
	if c := cmp.Compare(cosmosTableRank(a), cosmosTableRank(b)); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// queryTables answers Query Tables in the flavour's order (cosmosTableRank), paged by $top.
// A page that ends exactly at $top carries a NextTableName only when tables remain, or when
// the query has a $filter (E-cosmos-order: a filtered page at $top is reported to lead to an
// empty page). It reports false, having answered nothing, for a query it leaves to the
// Server (a $top the Server refuses, a NextTableName not the flavour's).
func (c *Cosmos) queryTables(w http.ResponseWriter, r *http.Request, id string, a cosmosAnswer) bool {
	q := r.URL.Query()
	size, ok := cosmosPageSize(q)
	if !ok {
		return false
	}
	after := ""
	if next := q.Get("NextTableName"); next != "" {
		raw, err := base64.RawURLEncoding.DecodeString(next)
		if err != nil {
			return false
		}
		after = string(raw)
	}
	q.Del("$top")
	q.Del("NextTableName")
	items, head, rec, ok := c.innerPages(r, q, []string{wire.HeaderNextTableName})
	if !ok {
		c.answer(w, r, rec, id, a)
		return true
	}
	type named struct {
		name string
		item json.RawMessage
	}
	all := make([]named, 0, len(items))
	for _, it := range items {
		var t struct{ TableName string }
		_ = json.Unmarshal(it, &t)
		all = append(all, named{t.TableName, it})
	}
	slices.SortFunc(all, func(x, y named) int { return compareTables(x.name, y.name) })
	start := 0
	if after != "" {
		for start < len(all) && compareTables(all[start].name, after) <= 0 {
			start++
		}
	}
	end := min(start+size, len(all))
	page := make([]json.RawMessage, 0, end-start)
	for _, t := range all[start:end] {
		page = append(page, t.item)
	}
	switch {
	case end < len(all):
		a.tableContinuation = base64.RawURLEncoding.EncodeToString([]byte(all[end-1].name))
	case end-start == size && q.Has("$filter"):
		a.tableContinuation = cosmosLastTablePage
	}
	rec.body.Reset()
	rec.body.Write(withValue(head, page))
	c.answer(w, r, rec, id, a)
	return true
}
