package tableserver

import (
	"bytes"
	"encoding/xml"
	"net/http"
	"strings"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/reference/wire"
)

// SignedIdentifier is one stored access policy of a table (Get/Set Table ACL, EVIDENCE.md 2.2).
// The server keeps them itself: api.Backend has no ACL operations. A service SAS naming
// one (si) takes the fields it leaves out from it, looked up on every request
// (authenticateServiceSAS).
type SignedIdentifier struct {
	ID         string    `xml:"Id"`
	Start      time.Time `xml:"-"`
	Expiry     time.Time `xml:"-"`
	Permission string    `xml:"-"`
}

// tableACL answers GET and PUT `table?comp=acl`, in XML whatever Accept says. Any other
// comp is 400 InvalidQueryParameterValue; a SAS may not manage policies; a missing table
// is 404 ResourceNotFound (EVIDENCE.md, E-acl-xml, E-acl-missing-table).
func (x *exchange) tableACL(method, table string) error {
	x.jsonErr, x.prefixedXMLErr = false, true // ACL answers are XML (PF, E-acl-error-xml)
	if x.query.Get("comp") != "acl" {
		return spec.ErrInvalidQueryParameter.New()
	}
	if err := x.permitTableOp(); err != nil {
		return err
	}
	ctx, err := x.context()
	if err != nil {
		return err
	}
	defer ctx.cancel()
	page, err := x.backend.QueryTables(ctx, api.TableQuery{Filter: "TableName eq " + wire.FormatKeyLiteral(table)})
	if err != nil {
		return err
	}
	found := false
	for _, t := range page.Tables {
		found = found || x.s.sameTable(t, table)
	}
	if !found {
		return spec.ErrResourceNotFound.New()
	}
	key := aclKey{x.account, x.s.tableKey(table)}
	switch method {
	case http.MethodGet, http.MethodHead:
		x.s.aclMu.Lock()
		ids := append([]SignedIdentifier(nil), x.s.acls[key]...)
		x.s.aclMu.Unlock()
		x.w.Header().Set(wire.HeaderContentType, wire.ContentTypeXML)
		x.write(http.StatusOK, encodeACL(ids))
		return nil
	case http.MethodPut:
		body, err := x.readBody()
		if err != nil {
			return err
		}
		ids, err := decodeACL(body)
		if err != nil {
			return err
		}
		if err := x.s.setACL(key, ids); err != nil {
			return err
		}
		x.write(http.StatusNoContent, nil)
		return nil
	}
	return spec.ErrMethodNotAllowed.New()
}

// encodeACL renders the policies as Storage does: a UTF-8 BOM, then the XML, times with
// seven fractional digits (EVIDENCE.md 2.2); no policy is `<SignedIdentifiers />`
// (EVIDENCE.md, E-acl-xml).
func encodeACL(ids []SignedIdentifier) []byte {
	var b bytes.Buffer
	b.WriteString("\xef\xbb\xbf<?xml version=\"1.0\" encoding=\"utf-8\"?>")
	if len(ids) == 0 {
		b.WriteString("<SignedIdentifiers />")
		return b.Bytes()
	}
	b.WriteString("<SignedIdentifiers>")
	for _, id := range ids {
		b.WriteString("<SignedIdentifier><Id>")
		_ = xml.EscapeText(&b, []byte(id.ID))
		b.WriteString("</Id>")
		if id.Start.IsZero() && id.Expiry.IsZero() && id.Permission == "" {
			// A policy without any field is answered without an AccessPolicy element
			// (EVIDENCE.md, E-acl-partial).
			b.WriteString("</SignedIdentifier>")
			continue
		}
		b.WriteString("<AccessPolicy>")
		if !id.Start.IsZero() {
			b.WriteString("<Start>" + api.FormatDateTime7(id.Start) + "</Start>")
		}
		if !id.Expiry.IsZero() {
			b.WriteString("<Expiry>" + api.FormatDateTime7(id.Expiry) + "</Expiry>")
		}
		if id.Permission != "" {
			b.WriteString("<Permission>")
			_ = xml.EscapeText(&b, []byte(id.Permission))
			b.WriteString("</Permission>")
		}
		b.WriteString("</AccessPolicy></SignedIdentifier>")
	}
	b.WriteString("</SignedIdentifiers>")
	return b.Bytes()
}

// decodeACL reads a Set Table ACL body: at most spec.MaxStoredAccessPolicies identifiers of
// at most 64 characters, permissions from "raud". Faults are 400 InvalidXmlDocument.
func decodeACL(body []byte) ([]SignedIdentifier, error) {
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, nil
	}
	doc, err := wire.DecodeACL(body)
	if err != nil || doc.XMLName.Local != "SignedIdentifiers" {
		return nil, spec.ErrInvalidXMLDocument.New()
	}
	if len(doc.Identifiers) > spec.MaxStoredAccessPolicies {
		return nil, spec.ErrInvalidXMLDocument.Newf("At most %d signed identifiers are allowed.", spec.MaxStoredAccessPolicies)
	}
	out := make([]SignedIdentifier, 0, len(doc.Identifiers))
	for _, d := range doc.Identifiers {
		if d.ID == "" || len(d.ID) > 64 {
			return nil, spec.ErrInvalidXMLDocument.Newf("A signed identifier must have an Id of 1 to 64 characters.")
		}
		id := SignedIdentifier{ID: d.ID}
		if d.Policy != nil {
			var err error
			if d.Policy.Start != "" {
				if id.Start, err = wire.ParseDateTime(d.Policy.Start); err != nil {
					return nil, spec.ErrInvalidXMLDocument.Newf("The Start of policy %q is not a valid time.", d.ID)
				}
			}
			if d.Policy.Expiry != "" {
				if id.Expiry, err = wire.ParseDateTime(d.Policy.Expiry); err != nil {
					return nil, spec.ErrInvalidXMLDocument.Newf("The Expiry of policy %q is not a valid time.", d.ID)
				}
			}
			for _, c := range d.Policy.Permission {
				if !strings.ContainsRune("raud", c) {
					return nil, spec.ErrInvalidXMLDocument.Newf("The Permission of policy %q is not valid.", d.ID)
				}
			}
			id.Permission = d.Policy.Permission
		}
		out = append(out, id)
	}
	return out, nil
}
