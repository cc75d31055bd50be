package mutant

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tableconform/conform/reference/api"
)

// Composite is a mutant made of several registered mutants' faults at once, as a real
// emulator carries several: its decorator wraps the base in each fault's decorator, the
// first fault outermost, and it breaks the union of what they break.
type Composite struct {
	Name        string
	Description string
	// Faults names the registered mutants whose faults it carries.
	Faults []string
}

// Composites are the mutants modelled on emulators: each carries faults one emulator was
// found to have together. The lists are data; a fault added on its own (as a mutant) joins
// a composite by its name.
var Composites = []Composite{
	{Name: "emulator-like-a",
		Description: "serialises its stored record whole (a stray ETag member beside the properties), returns Timestamps in its local time, and puts back a snapshot of the whole account when a transaction fails",
		Faults:      []string{"stray-etag-member", "timestamp-local-time", "batch-failure-rolls-back-account"}},
	{Name: "emulator-like-b",
		Description: "updates by an unlocked read, check and write; ignores $top and never pages a query; lists every table of the account whatever Query Tables' $filter says",
		Faults:      []string{"unlocked-read-modify-write", "top-ignored", "continuation-dropped", "tables-filter-ignored"}},
	{Name: "emulator-like-c",
		Description: "mints a fresh ETag at every read, refuses every service SAS and binds or more tightly than and",
		Faults:      []string{"reads-touch-entity", "sas-refused", "or-before-and"}},
}

// compose returns the mutant that carries c's faults. It panics on a fault that is not
// registered, on faults that need different bases, and on a fault that breaks the
// transport (its failures are errors of every rule, not a behaviour's).
func compose(c Composite) Mutant {
	if len(c.Faults) < 2 {
		panic(fmt.Sprintf("composite mutant %s: %d faults; a composite carries several", c.Name, len(c.Faults)))
	}
	m := Mutant{Name: c.Name, Description: c.Description + " (faults: " + strings.Join(c.Faults, ", ") + ")", Faults: c.Faults}
	var wraps []func(api.Backend) api.Backend
	for _, name := range c.Faults {
		f, ok := Lookup(name)
		switch {
		case !ok:
			panic(fmt.Sprintf("composite mutant %s: no mutant %q", c.Name, name))
		case f.Transport || len(f.Faults) > 0:
			panic(fmt.Sprintf("composite mutant %s: fault %s breaks the transport or is a composite", c.Name, name))
		case f.Base != "" && m.Base != "" && f.Base != m.Base:
			panic(fmt.Sprintf("composite mutant %s: faults need bases %s and %s", c.Name, m.Base, f.Base))
		}
		if f.Base != "" {
			m.Base = f.Base
		}
		for _, id := range f.Breaks {
			if !slices.Contains(m.Breaks, id) {
				m.Breaks = append(m.Breaks, id)
			}
		}
		for _, a := range f.RunAreas() {
			if !slices.Contains(m.Areas, a) {
				m.Areas = append(m.Areas, a)
			}
		}
		for id, why := range f.AlsoFails {
			if m.AlsoFails == nil {
				m.AlsoFails = map[string]string{}
			}
			m.AlsoFails[id] = name + ": " + why
		}
		m.SpecTimeout = max(m.SpecTimeout, f.SpecTimeout)
		wraps = append(wraps, f.Wrap)
	}
	m.Wrap = func(b api.Backend) api.Backend {
		for _, w := range slices.Backward(wraps) {
			b = w(b)
		}
		return b
	}
	return register(m)
}

// init runs after also_fails.go's (a package's files initialise in name order), so that a
// composite carries the AlsoFails declared for its faults.
func init() {
	for _, c := range Composites {
		compose(c)
	}
}
