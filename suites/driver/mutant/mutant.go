package mutant

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
)

// Prefix starts the backend name of a mutant: "mutant:NAME" or "mutant:NAME@BASE".
const Prefix = "mutant:"

// DefaultBase is the backend a mutant wraps when neither the target nor the mutant names one.
const DefaultBase = "reference"

// Mutant is one deliberately wrong backend.
type Mutant struct {
	// Name is unique, lower-case words joined by hyphens.
	Name string
	// Description says what the mutant does wrong, in a backend author's words.
	Description string
	// Breaks lists the rule ids that the suite MUST fail against this mutant.
	Breaks []string
	// AlsoFails lists rules, with the reason for each, that the mutant's fault breaks too
	// though it is not written for them: over the whole catalogue they may fail against it
	// (they need not); any other MUST rule that fails is a mis-blame.
	AlsoFails map[string]string
	// Faults names the mutants a composite mutant is made of (see Composite).
	Faults []string
	// Wrap decorates a correct backend with the mutant's fault.
	Wrap func(api.Backend) api.Backend

	// Base is the backend the mutant wraps by default ("" means DefaultBase): a mutant whose
	// fault needs a capability (SAS) names a base that has it.
	Base string
	// Areas lists areas whose specs the mutation run covers besides the areas of Breaks:
	// where the mutant is expected to be caught too.
	Areas []spec.Area
	// LabelFilter, when set, replaces the areas: the mutation run covers the specs it
	// selects (a Ginkgo label filter), e.g. for mutants whose specs wait for a timeout.
	LabelFilter string
	// SpecTimeout, when set, bounds each spec of the mutation run.
	SpecTimeout time.Duration
	// Transport marks a mutant that breaks the transport (it hangs or drops connections)
	// rather than a documented behaviour: it tests the framework's timeouts and error
	// reporting, and its failures say nothing about the strength of a rule's specs, so the
	// catalogue coverage leaves them out.
	Transport bool
}

// RunAreas returns the areas whose specs a mutation run of m covers: those of its Breaks
// and its Areas, in name order.
func (m Mutant) RunAreas() []spec.Area {
	seen := map[spec.Area]bool{}
	var out []spec.Area
	add := func(a spec.Area) {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	for _, id := range m.Breaks {
		if r, ok := spec.LookupRule(id); ok {
			add(r.Area)
		}
	}
	for _, a := range m.Areas {
		add(a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// BaseOrDefault returns the backend the mutant wraps by default.
func (m Mutant) BaseOrDefault() string {
	if m.Base == "" {
		return DefaultBase
	}
	return m.Base
}

var (
	registryMu sync.Mutex
	registry   = map[string]Mutant{}
)

// register adds m; it is called from package-level variable initialisers, one per mutant,
// and panics on a duplicate or malformed mutant so that the catalogue is checked at start.
func register(m Mutant) Mutant {
	registryMu.Lock()
	defer registryMu.Unlock()
	switch {
	case m.Name == "" || strings.ContainsAny(m.Name, " @=:,"):
		panic(fmt.Sprintf("mutant: bad name %q", m.Name))
	case m.Wrap == nil:
		panic("mutant " + m.Name + ": no Wrap")
	case len(m.Breaks) == 0:
		panic("mutant " + m.Name + ": breaks no rule")
	}
	if _, dup := registry[m.Name]; dup {
		panic("mutant registered twice: " + m.Name)
	}
	registry[m.Name] = m
	return m
}

// All returns every mutant, ordered by name.
func All() []Mutant {
	registryMu.Lock()
	defer registryMu.Unlock()
	out := make([]Mutant, 0, len(registry))
	for _, m := range registry {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup returns the mutant with the given name.
func Lookup(name string) (Mutant, bool) {
	registryMu.Lock()
	defer registryMu.Unlock()
	m, ok := registry[name]
	return m, ok
}

// ParseTarget splits a backend name "mutant:NAME" or "mutant:NAME@BASE" into the mutant and
// the base backend it wraps (the mutant's own default when the target names none). ok is
// false when target is not a mutant name; err reports an unknown mutant.
func ParseTarget(target string) (m Mutant, base string, ok bool, err error) {
	rest, ok := strings.CutPrefix(target, Prefix)
	if !ok {
		return Mutant{}, "", false, nil
	}
	name, base, _ := strings.Cut(rest, "@")
	m, found := Lookup(name)
	if !found {
		names := make([]string, 0)
		for _, k := range All() {
			names = append(names, k.Name)
		}
		return Mutant{}, "", true, fmt.Errorf("unknown mutant %q (known: %s)", name, strings.Join(names, ", "))
	}
	if base == "" {
		base = m.BaseOrDefault()
	}
	return m, base, true, nil
}

// Info describes a mutant wrapped around a base backend described by base.
func Info(m Mutant, base driver.Info) driver.Info {
	info := base
	info.Name = Prefix + m.Name
	info.Kind = "mutant"
	if base.Name != "" {
		info.Version = strings.TrimSpace(base.Name + " " + base.Version)
	}
	return info
}

// hooks are the capability-level faults of a mutant.
type hooks struct {
	// sas rewrites the options of a SAS before the wrapped backend signs it.
	sas func(driver.SASOptions) driver.SASOptions
	// raw replaces raw HTTP's Do; it receives the wrapped backend's Do.
	raw func(do func(*http.Request) (*http.Response, error), req *http.Request) (*http.Response, error)
	// sasDerived decorates a backend derived by WithSAS, given the backend it was derived
	// from (which holds the account key) and the SAS's options.
	sasDerived func(derived, parent api.Backend, opts driver.SASOptions) api.Backend
	// accountSAS rewrites the options of an account SAS before the wrapped backend signs it.
	accountSAS func(driver.AccountSASOptions) driver.AccountSASOptions
}

// define builds a mutant whose Wrap decorates with newDecorator and forwards the wrapped
// backend's capabilities, with the given capability-level faults.
func define(m Mutant, newDecorator func(inner api.Backend) api.Backend, h hooks) Mutant {
	var wrap func(api.Backend) api.Backend
	wrap = func(inner api.Backend) api.Backend {
		return withCapabilities(inner, newDecorator(inner), wrap, h)
	}
	m.Wrap = wrap
	return register(m)
}

// withCapabilities returns d plus the optional capabilities of inner. A backend derived by
// WithSAS is decorated again by rewrap, so the mutant's fault applies to SAS access too.
func withCapabilities(inner, d api.Backend, rewrap func(api.Backend) api.Backend, h hooks) api.Backend {
	sas, hasSAS := inner.(driver.SASIssuer)
	raw, hasRaw := inner.(driver.RawHTTP)
	s := sasForward{sas: sas, rewrap: rewrap, hook: h.sas, parent: inner, derived: h.sasDerived, accountHook: h.accountSAS}
	r := rawForward{raw: raw, hook: h.raw}
	switch {
	case hasSAS && hasRaw:
		return &struct {
			api.Backend
			driver.SASIssuer
			driver.RawHTTP
		}{d, s, r}
	case hasSAS:
		return &struct {
			api.Backend
			driver.SASIssuer
		}{d, s}
	case hasRaw:
		return &struct {
			api.Backend
			driver.RawHTTP
		}{d, r}
	}
	return d
}

type sasForward struct {
	sas     driver.SASIssuer
	rewrap  func(api.Backend) api.Backend
	hook    func(driver.SASOptions) driver.SASOptions
	parent  api.Backend
	derived func(derived, parent api.Backend, opts driver.SASOptions) api.Backend

	accountHook func(driver.AccountSASOptions) driver.AccountSASOptions
}

func (s sasForward) WithAccountSAS(ctx context.Context, opts driver.AccountSASOptions) (api.Backend, error) {
	if s.accountHook != nil {
		opts = s.accountHook(opts)
	}
	b, err := s.sas.WithAccountSAS(ctx, opts)
	if err != nil {
		return nil, err
	}
	return s.rewrap(b), nil
}

func (s sasForward) WithSAS(ctx context.Context, opts driver.SASOptions) (api.Backend, error) {
	if s.hook != nil {
		opts = s.hook(opts)
	}
	b, err := s.sas.WithSAS(ctx, opts)
	if err != nil {
		return nil, err
	}
	if s.derived != nil {
		b = s.derived(b, s.parent, opts)
	}
	return s.rewrap(b), nil
}

type rawForward struct {
	raw  driver.RawHTTP
	hook func(do func(*http.Request) (*http.Response, error), req *http.Request) (*http.Response, error)
}

func (r rawForward) NewRequest(ctx context.Context, method, path string, body []byte) (*http.Request, error) {
	return r.raw.NewRequest(ctx, method, path, body)
}

func (r rawForward) Do(req *http.Request) (*http.Response, error) {
	if r.hook != nil {
		return r.hook(r.raw.Do, req)
	}
	return r.raw.Do(req)
}

// entityKey identifies an entity across tables for decorators that keep state. Table names
// are case-insensitive.
type entityKey struct {
	table, pk, rk string
}

func keyOf(table, pk, rk string) entityKey {
	return entityKey{table: strings.ToLower(table), pk: pk, rk: rk}
}

// mapEntities applies fn to every entity of a page in place.
func mapEntities(es []api.Entity, fn func(*api.Entity)) {
	for i := range es {
		fn(&es[i])
	}
}

// mapResults applies fn to the entity of every Retrieve result.
func mapResults(rs []api.BatchResult, fn func(*api.Entity)) {
	for i := range rs {
		if rs[i].Entity != nil {
			fn(rs[i].Entity)
		}
	}
}
