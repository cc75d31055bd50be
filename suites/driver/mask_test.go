package driver

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tableconform/conform/reference/spec"
)

func TestMaskSecrets(t *testing.T) {
	const sig = "ZkYNXnEbLk4OE/VcJJuCIUbBveN8CUsdIjL2bEmzI6E="
	for _, text := range []string{
		"Authorization: SharedKey devstoreaccount1:" + sig,
		"authorization=SharedKeyLite acct:" + sig + " date=...",
		"The MAC signature found in the HTTP request '" + sig + "' is not the same as any computed signature.",
		"https://a.table.core.windows.net/t?sv=2019-02-02&sig=" + sig + "&se=x",
		"https://a.table.core.windows.net/t?sv=2019-02-02&sig%3D" + sig,
		"DefaultEndpointsProtocol=https;AccountName=a;AccountKey=" + sig + ";TableEndpoint=x",
		"SharedAccessSignature=sv=2019&sig=" + sig + ";TableEndpoint=x",
		"Authorization: Bearer " + sig,
		`{"failure":"The MAC signature found in the HTTP request '` + sig + `' is not"}`,
	} {
		got := MaskSecrets(text)
		if strings.Contains(got, sig) || strings.Contains(got, sig[:20]) || !strings.Contains(got, Masked) {
			t.Errorf("MaskSecrets(%q) = %q", text, got)
		}
	}
	for _, plain := range []string{"403 AuthenticationFailed: Server failed to authenticate the request.", "PartitionKey eq 'sig'", "signature",
		"answers 401 InvalidAuthenticationInfo with a Bearer challenge", "a WWW-Authenticate: Bearer challenge naming authorization_uri",
		"refuses a SAS whose sig= is forged"} {
		if got := MaskSecrets(plain); got != plain {
			t.Errorf("MaskSecrets(%q) = %q: nothing in it is secret", plain, got)
		}
	}
}

// The catalogue's own words hold no secret: masking a report changes none of them.
func TestMaskSecretsLeavesTheCatalogue(t *testing.T) {
	for _, r := range spec.Rules() {
		if text := fmt.Sprintf("%+v", r); MaskSecrets(text) != text {
			t.Errorf("%s: MaskSecrets changes its text:\n%s\n%s", r.ID, text, MaskSecrets(text))
		}
	}
}
