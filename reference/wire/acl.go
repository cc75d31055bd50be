package wire

import (
	"bytes"
	"encoding/xml"
)

// ACL is the XML document of Get and Set Table ACL (EVIDENCE.md 2.2): the table's stored
// access policies, their times and permissions as written. XMLName is the root element as
// read; the document's own is SignedIdentifiers.
type ACL struct {
	XMLName     xml.Name
	Identifiers []ACLIdentifier `xml:"SignedIdentifier"`
}

// ACLIdentifier is one signed identifier of an ACL; Policy is nil when it has no
// AccessPolicy element.
type ACLIdentifier struct {
	ID     string `xml:"Id"`
	Policy *struct {
		Start      string `xml:"Start"`
		Expiry     string `xml:"Expiry"`
		Permission string `xml:"Permission"`
	} `xml:"AccessPolicy"`
}

// DecodeACL reads an ACL document, after a UTF-8 byte-order mark if there is one.
func DecodeACL(body []byte) (ACL, error) {
	var doc ACL
	err := xml.Unmarshal(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")), &doc)
	return doc, err
}
