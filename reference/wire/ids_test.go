package wire

import (
	"regexp"
	"testing"
)

// Ids have the service's form and do not repeat.
func TestNewIDFormAndUniqueness(t *testing.T) {
	form := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for i := 0; i < 100000; i++ {
		id := NewID()
		if !form.MatchString(id) || seen[id] {
			t.Fatalf("id %d: %q (seen before: %v)", i, id, seen[id])
		}
		seen[id] = true
	}
}
