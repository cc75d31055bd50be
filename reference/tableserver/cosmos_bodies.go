package tableserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/tableconform/conform/reference/spec"
)

// cosmosContentType writes JSON media types as Cosmos does: "application/json; odata=..."
// without Storage's streaming and charset parameters.
func cosmosContentType(ct string) string {
	media, params, _ := strings.Cut(ct, ";")
	for _, p := range strings.Split(params, ";") {
		if level, ok := strings.CutPrefix(strings.TrimSpace(p), "odata="); ok {
			return media + "; odata=" + level
		}
	}
	return media
}

// member is one member of a JSON object, in the order it came.
type member struct {
	name  string
	value json.RawMessage
}

// objectMembers reads a JSON object's members in order; ok is false when body is not one.
func objectMembers(body []byte) ([]member, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var out []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		name, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		out = append(out, member{name, v})
	}
	return out, true
}

func encodeMembers(ms []member) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(m.name)
		b.Write(name)
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// cosmosFoldedNames are the property names of which Cosmos keeps one spelling only: with
// etag and Etag sent, Etag was dropped without an error; other names that differ only in
// case (Birthday, birthday) were both stored (E-cosmos-name-case).
var cosmosFoldedNames = map[string]bool{"etag": true}

// dropCaseDuplicates keeps, of the spellings of a name of cosmosFoldedNames, the first one
// (with its annotations) and drops the others without an error (E-cosmos-name-case).
func dropCaseDuplicates(body []byte) []byte {
	ms, ok := objectMembers(body)
	if !ok {
		return body
	}
	seen := map[string]string{} // lower-case property name -> the name kept
	var out []member
	dropped := false
	for _, m := range ms {
		prop, _, _ := strings.Cut(m.name, "@")
		lower := strings.ToLower(prop)
		if !cosmosFoldedNames[lower] {
			out = append(out, m)
			continue
		}
		if kept, ok := seen[lower]; ok && kept != prop {
			dropped = true
			continue
		}
		seen[lower] = prop
		out = append(out, m)
	}
	if !dropped {
		return body
	}
	return encodeMembers(out)
}

// cosmosEntityJSON rewrites an entity, or a query page of them, as Cosmos answers: Timestamp
// last and DateTime values with seven fractional digits (E-cosmos-shapes).
func cosmosEntityJSON(body []byte) []byte {
	ms, ok := objectMembers(body)
	if !ok {
		return body
	}
	for i, m := range ms {
		if m.name == "value" && len(m.value) > 0 && m.value[0] == '[' {
			var items []json.RawMessage
			if json.Unmarshal(m.value, &items) != nil {
				return body
			}
			var b bytes.Buffer
			b.WriteByte('[')
			for j, it := range items {
				if j > 0 {
					b.WriteByte(',')
				}
				b.Write(cosmosEntity(it))
			}
			b.WriteByte(']')
			ms[i].value = b.Bytes()
			return encodeMembers(ms)
		}
	}
	return cosmosEntity(body)
}

// withoutMetadata rewrites an answer in minimal metadata as odata=nometadata: without the
// odata.* members and the properties' annotations, at any depth of a query page.
func withoutMetadata(body []byte) []byte {
	ms, ok := objectMembers(body)
	if !ok {
		return body
	}
	out := ms[:0]
	for _, m := range ms {
		if strings.HasPrefix(m.name, "odata.") || strings.Contains(m.name, "@odata.") {
			continue
		}
		if m.name == "value" && len(m.value) > 0 && m.value[0] == '[' {
			var items []json.RawMessage
			if json.Unmarshal(m.value, &items) == nil {
				var b bytes.Buffer
				b.WriteByte('[')
				for j, it := range items {
					if j > 0 {
						b.WriteByte(',')
					}
					b.Write(withoutMetadata(it))
				}
				b.WriteByte(']')
				m.value = b.Bytes()
			}
		}
		out = append(out, m)
	}
	return encodeMembers(out)
}

var fraction = regexp.MustCompile(`^"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,7}))?Z"$`)

func cosmosEntity(body []byte) []byte {
	ms, ok := objectMembers(body)
	if !ok {
		return body
	}
	dateTimes := map[string]bool{"Timestamp": true}
	for _, m := range ms {
		if prop, ok := strings.CutSuffix(m.name, "@odata.type"); ok && string(m.value) == `"Edm.DateTime"` {
			dateTimes[prop] = true
		}
	}
	var out, last []member
	for _, m := range ms {
		if dateTimes[m.name] {
			if f := fraction.FindSubmatch(m.value); f != nil {
				digits := string(f[2]) + strings.Repeat("0", 7-len(f[2]))
				m.value = []byte(`"` + string(f[1]) + "." + digits + `Z"`)
			}
		}
		if m.name == "Timestamp" || m.name == "Timestamp@odata.type" {
			last = append(last, m)
			continue
		}
		out = append(out, m)
	}
	return encodeMembers(append(out, last...))
}

// cosmosBatchAnswer rewrites a transaction's answer as Cosmos writes it (E-cosmos-batch):
// LF-only part headers, 404 ResourceNotFound for a missing table without an index, error
// parts with full metadata and Cosmos's error body.
func cosmosBatchAnswer(body []byte, id string) []byte {
	m := changesetBoundary.FindStringSubmatch(string(body))
	if m == nil {
		return body
	}
	delim := "--" + m[1]
	parts := strings.Split(string(body), delim)
	var out strings.Builder
	out.WriteString(parts[0])
	for i, p := range parts[1:] {
		if rest, closing := strings.CutPrefix(p, "--"); closing {
			out.WriteString(delim + "--\n" + strings.TrimPrefix(rest, "\r\n"))
			continue
		}
		out.WriteString(delim + "\n" + cosmosBatchPart(p, i+1, id))
	}
	return []byte(out.String())
}

var changesetBoundary = regexp.MustCompile(`boundary=(changesetresponse_[0-9A-Za-z-]+)`)

// cosmosBatchPart rewrites one part of a change set's answer (after its boundary line):
// LF-only part headers; a success keeps ETag, Preference-Applied and Location and gets
// Content-ID, its number in the change set from 1; a failure is Cosmos's error body in full
// metadata, a missing table 404 ResourceNotFound without an index (E-cosmos-batch).
func cosmosBatchPart(p string, n int, id string) string {
	_, msg, ok := strings.Cut(strings.TrimPrefix(p, "\r\n"), "\r\n\r\n")
	if !ok {
		return p
	}
	head, tail, ok := strings.Cut(msg, "\r\n\r\n")
	if !ok {
		return p
	}
	lines := strings.Split(head, "\r\n")
	status := 0
	if f := strings.Fields(lines[0]); len(f) >= 2 {
		status, _ = strconv.Atoi(f[1])
	}
	var b strings.Builder
	b.WriteString("Content-Type: application/http\nContent-Transfer-Encoding: binary\n\n")
	b.WriteString(lines[0] + "\r\n")
	if status >= 400 {
		body, after, _ := strings.Cut(tail, "\r\n")
		e := storageError("", status, []byte(body))
		if e.Code == spec.ErrTableNotFound.Code {
			e.Code, e.Message = spec.ErrResourceNotFound.Code, spec.ErrResourceNotFound.Message
		}
		b.WriteString("Content-Type: application/json;odata=fullmetadata\r\n\r\n")
		b.Write(cosmosErrorBody(e, id))
		b.WriteString("\r\n" + after)
		return b.String()
	}
	header := map[string]string{}
	for _, l := range lines[1:] {
		if k, v, ok := strings.Cut(l, ": "); ok {
			header[http.CanonicalHeaderKey(k)] = v
		}
	}
	for _, k := range []string{"Content-Type", "Etag", "Preference-Applied", "Location"} {
		if v, ok := header[k]; ok {
			name := k
			if k == "Etag" {
				name = "ETag"
			}
			if k == "Content-Type" {
				v = cosmosContentType(v)
			}
			b.WriteString(name + ": " + v + "\r\n")
		}
	}
	b.WriteString("Content-ID: " + strconv.Itoa(n) + "\r\n\r\n" + tail)
	return b.String()
}
