package tableserver

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"

	"github.com/tableconform/conform/reference/spec"
)

// OAuth bearer tokens (EVIDENCE.md, E-oauth-bearer). With WithOAuth the server accepts a
// well-formed JWT whose audience is storage and that is valid now; it cannot check the
// signature, as it knows no issuer's keys, so the mode is for local development only.
// Without it every bearer token is refused. A refused token gets 401
// InvalidAuthenticationInfo with the challenge Storage sends.

// StorageAudience is the audience of a token for Azure Storage.
const StorageAudience = "https://storage.azure.com"

// WithOAuth makes the server accept bearer tokens for the storage audience.
func WithOAuth() Option { return func(s *Server) { s.oauth = true } }

func isBearer(v string) bool {
	return len(v) > 7 && strings.EqualFold(v[:7], "bearer ")
}

// jwtClaims are the claims the server reads.
type jwtClaims struct {
	Audience  json.RawMessage `json:"aud"`
	Expires   *float64        `json:"exp"`
	NotBefore *float64        `json:"nbf"`
	Tenant    string          `json:"tid"`
}

// authenticateBearer accepts or refuses an "Authorization: Bearer <token>" header.
func (x *exchange) authenticateBearer(v string) error {
	token := strings.TrimSpace(v[7:])
	claims, ok := parseJWT(token)
	if x.s.oauth && ok && audienceIsStorage(claims.Audience, x.account) &&
		claims.Expires != nil && x.now.Before(unixTime(*claims.Expires)) &&
		(claims.NotBefore == nil || !x.now.Before(unixTime(*claims.NotBefore).Add(-spec.MaxClockSkew))) {
		return nil
	}
	tenant := "common"
	if ok && claims.Tenant != "" && !strings.ContainsAny(claims.Tenant, " \"/\\") {
		tenant = claims.Tenant
	}
	x.w.Header().Set("WWW-Authenticate", "Bearer authorization_uri=https://login.microsoftonline.com/"+tenant+"/oauth2/authorize resource_id="+StorageAudience)
	e := spec.ErrBearerRefused.New()
	if !x.s.oauth {
		e.Message += "\nThis server does not accept bearer tokens (start it with --oauth)."
	}
	return e
}

func unixTime(f float64) time.Time { return time.Unix(int64(f), 0) }

// parseJWT reads the claims of a compact JWS (three base64url parts, a JSON header with
// alg and a JSON payload). ok is false for anything else.
func parseJWT(token string) (jwtClaims, bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 || len(token) > 16<<10 {
		return jwtClaims{}, false
	}
	dec := func(s string) ([]byte, error) { return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "=")) }
	hb, err1 := dec(parts[0])
	pb, err2 := dec(parts[1])
	if err1 != nil || err2 != nil {
		return jwtClaims{}, false
	}
	var header struct {
		Alg string `json:"alg"`
	}
	if json.Unmarshal(hb, &header) != nil || header.Alg == "" {
		return jwtClaims{}, false
	}
	var c jwtClaims
	if json.Unmarshal(pb, &c) != nil {
		return jwtClaims{}, false
	}
	return c, true
}

// audienceIsStorage accepts https://storage.azure.com (with or without a final slash) and
// the account's own table endpoint.
func audienceIsStorage(raw json.RawMessage, account string) bool {
	var list []string
	var one string
	if json.Unmarshal(raw, &one) == nil {
		list = []string{one}
	} else if json.Unmarshal(raw, &list) != nil {
		return false
	}
	for _, a := range list {
		a = strings.TrimSuffix(a, "/")
		if a == StorageAudience || strings.EqualFold(a, "https://"+account+".table.core.windows.net") {
			return true
		}
	}
	return false
}
