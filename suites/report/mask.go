package report

import (
	"encoding/json"

	"github.com/tableconform/conform/suites/driver"
)

// MaskSecrets returns r with every secret in its text masked (driver.MaskSecrets): a
// failure, an error or a start error that quotes a Shared Key or SAS signature never
// reaches a report file. It masks the canonical JSON and reads it back, so that no field
// is left out; r comes back as it is when nothing in it is secret.
func MaskSecrets(r Report) Report {
	data, err := json.Marshal(r)
	if err != nil {
		return r
	}
	masked := driver.MaskSecrets(string(data))
	if masked == string(data) {
		return r
	}
	var out Report
	if err := json.Unmarshal([]byte(masked), &out); err != nil {
		return r
	}
	return out
}
