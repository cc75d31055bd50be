package tableserver

import (
	"net"
	"net/http"
	"net/netip"

	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/reference/wire"
)

// Shared access signatures beyond the signature itself: the signed IP range and protocol
// (service and account SAS), stored access policies (si) and the operations an account SAS
// allows (EVIDENCE.md, E-account-sas, E-stored-policy, E-sas-ip-protocol).

// remoteAddr is the client's address, or the invalid address when it cannot be read.
func (x *exchange) remoteAddr() netip.Addr {
	host, _, err := net.SplitHostPort(x.r.RemoteAddr)
	if err != nil {
		host = x.r.RemoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	return a
}

// authenticateServiceSAS checks a service SAS: its signature, then its stored access
// policy, looked up on every request so that changing or removing the policy revokes the
// SAS at once, then its validity window, IP range and protocol.
func (x *exchange) authenticateServiceSAS() error {
	sas, err := wire.ParseSAS(x.query)
	if err != nil {
		return err
	}
	if err := sas.VerifySignature(x.account, x.s.keys[x.account]); err != nil {
		return err
	}
	if sas.Identifier != "" {
		pol, ok := x.s.policy(x.account, sas.Table, sas.Identifier)
		if !ok {
			e := spec.ErrAuthenticationFailed.New()
			e.Message += "\nThe signed identifier (si) names no stored access policy of the table."
			return e
		}
		if sas, err = sas.WithPolicy(pol.Start, pol.Expiry, pol.Permission); err != nil {
			return err
		}
	}
	if err := sas.CheckTimes(x.now); err != nil {
		return err
	}
	if err := wire.CheckSASRestrictions(sas.IPRange, sas.Protocol, x.remoteAddr(), x.r.TLS != nil); err != nil {
		return err
	}
	x.sas = &sas
	return nil
}

// authenticateAccountSAS checks an account SAS: signature, validity window, IP range,
// protocol and that it covers the Table service.
func (x *exchange) authenticateAccountSAS() error {
	sas, err := wire.ParseAccountSAS(x.query)
	if err != nil {
		return err
	}
	if err := sas.Verify(x.account, x.s.keys[x.account], x.now); err != nil {
		return err
	}
	if err := wire.CheckSASRestrictions(sas.IPRange, sas.Protocol, x.remoteAddr(), x.r.TLS != nil); err != nil {
		return err
	}
	if err := sas.AllowsService(); err != nil {
		return err
	}
	x.acctSAS = &sas
	return nil
}

// permitAccountTableOp checks a table-level operation against an account SAS: resource
// type c, with l to list or read tables, w (or a, c) to create, d to delete. Table ACLs
// are managed with the account key only.
func (x *exchange) permitAccountTableOp() error {
	if x.query.Has("comp") {
		return spec.ErrAuthorizationFailure.New()
	}
	switch x.r.Method {
	case http.MethodPost:
		return x.acctSAS.Allows(wire.SASResourceContainer, "w", "a", "c")
	case http.MethodDelete:
		return x.acctSAS.Allows(wire.SASResourceContainer, "d")
	}
	return x.acctSAS.Allows(wire.SASResourceContainer, "l")
}

// permitQuery checks Query Entities on table against the request's SAS: permission r of a
// service SAS for that table, or resource type o with permission r of an account SAS.
func (x *exchange) permitQuery(table string) error {
	switch {
	case x.acctSAS != nil:
		return x.acctSAS.Allows(wire.SASResourceObject, "r")
	case x.sas != nil:
		return x.sas.AllowsTable(table, "r")
	}
	return nil
}

// policy returns the stored access policy id of account's table.
func (s *Server) policy(account, table, id string) (SignedIdentifier, bool) {
	s.aclMu.Lock()
	defer s.aclMu.Unlock()
	for _, p := range s.acls[aclKey{account, s.tableKey(table)}] {
		if p.ID == id {
			return p, true
		}
	}
	return SignedIdentifier{}, false
}
