package tableserver

import (
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/reference/wire"
)

// authenticate accepts Shared Key, Shared Key Lite, a service SAS, or (when allowed)
// nothing.
func (x *exchange) authenticate(escapedPath string) error {
	keys := func(a string) ([]byte, bool) {
		if a == x.account {
			return x.accountOf.key, true
		}
		k, ok := x.s.keys[a]
		return k, ok
	}
	if v := wire.FirstValue(x.r.Header, wire.HeaderAuthorization); isBearer(v) {
		return x.authenticateBearer(v)
	} else if v != "" {
		acct, err := wire.VerifySharedKeyAuthorization(v, x.r.Method, x.r.Header, escapedPath, x.r.URL.RawQuery, x.query, keys, x.now)
		if err != nil {
			return err
		}
		if acct != x.account {
			e := spec.ErrAuthenticationFailed.New()
			e.Message += "\nThe signing account does not own the requested resource."
			return e
		}
		return nil
	}
	if wire.IsAccountSAS(x.query) {
		return x.authenticateAccountSAS()
	}
	if wire.IsSAS(x.query) {
		return x.authenticateServiceSAS()
	}
	if x.s.allowAnon {
		return nil
	}
	// An anonymous request: 401 or 403 is UNCERTAIN (EVIDENCE.md 11.13); conform answers as
	// Azurite does, 403 AuthorizationFailure.
	return spec.ErrAuthorizationFailure.New()
}

// permit checks the SAS, if the request carries one, for an operation on an entity.
func (x *exchange) permit(table, perms, pk, rk string) error {
	if x.acctSAS != nil {
		return x.acctSAS.Allows(wire.SASResourceObject, perms)
	}
	if x.sas == nil {
		return nil
	}
	return x.sas.Allows(table, perms, pk, rk)
}

// permitTableOp refuses table-level operations to a service SAS, which grants entity access
// to one table only (EVIDENCE.md 7.2); an account SAS allows them by resource type and
// permission (permitAccountTableOp).
func (x *exchange) permitTableOp() error {
	if x.acctSAS != nil {
		return x.permitAccountTableOp()
	}
	if x.sas == nil {
		return nil
	}
	return spec.ErrAuthorizationFailure.New()
}
