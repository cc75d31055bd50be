package driver

import "regexp"

// Masked stands in for a secret that MaskSecrets removed.
const Masked = "***"

// secretPatterns find the secrets a request carries and an answer may quote back: the
// Shared Key (Lite) signature of an Authorization header ("SharedKey account:SIGNATURE"),
// a bearer token, a SAS's sig= (also URL-escaped), a connection string's AccountKey= and
// SharedAccessSignature=, and the signature Azure's AuthenticationErrorDetail quotes ("The
// MAC signature found in the HTTP request '...'"). Each keeps its first group, the words
// that say what was masked.
var secretPatterns = []*regexp.Regexp{
	regexp.MustCompile(`(SharedKey(?:Lite)?\s+[^\s:"'<>]+:)[A-Za-z0-9+/=%]+`),
	regexp.MustCompile(`(\bBearer\s+)[A-Za-z0-9\-_.~+/]{20,}=*`), // a token, not the word of "a Bearer challenge"
	regexp.MustCompile(`(?i)(\bsig(?:=|%3D))[^&;\s"'<>\\]+`),
	regexp.MustCompile(`(?i)(\b(?:AccountKey|SharedAccessSignature)=)[^;\s"'<>\\]+`),
	regexp.MustCompile(`(signature found in the HTTP request ')[^']*`),
}

// MaskSecrets returns text with every Shared Key signature, SAS signature, bearer token and
// account key in it replaced by Masked; prose that names them ("a Bearer challenge", "the
// sig= parameter") is left as it is. Whatever conform prints or writes of an error or
// an answer passes through it: a wrong key's answer quotes the request's signature.
func MaskSecrets(text string) string {
	for _, p := range secretPatterns {
		text = p.ReplaceAllString(text, "${1}"+Masked)
	}
	return text
}
