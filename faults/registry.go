package faults

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/crashwall/chaos/spec"
)

// A tool fault family lives in one file of this package: its Family (which call is hit,
// what the wall answers) and its Entry (everything else chaos knows of it), registered
// from the file's init. The rest of chaos finds a family by name through Lookup and asks
// it what it can do through the optional capabilities below, by type assertion, as
// toxiproxy finds its stateful toxics; no other package names a family.
//
//	spec loader ──names, needs, variants──> Entry ──Family──> Hits, Apply          <── the hub
//	chaos faults, manual, skill tests ─────────┘   └─capabilities (type assertion) <── the hub's login, the browser wall

// Family is the core of a tool fault: which call it hits and what the wall answers.
type Family interface {
	// Hits reports whether the condition targets a call at this position (before the rate).
	Hits(c Condition, pos Position) bool
	// Apply performs the faulted call.
	Apply(ctx context.Context, c Condition, seed int64, req Request, w World) Outcome
}

// Entry is a family as it registers itself: its name, the tools it applies to, its
// variants, how it describes a condition, when it takes success away, and where manual
// mode and skill tests use it.
type Entry struct {
	// Name is the family's name in specs (such as phantom_success).
	Name string
	// Rank places the family in every listing (chaos faults, the spec loader's messages,
	// docs/faults.md and docs/verdicts.md's table): lower first.
	Rank int
	// Family decides and applies the fault.
	Family Family
	// Eligible says, in words, which tools the family applies to.
	Eligible string
	// Needs is the effect a tool must have for the family to apply ("" : any effect, or
	// one Variants decides); the spec loader checks a spec's tools against it.
	Needs spec.Effect
	// Variants lists the variants of the family that apply to tool t of spec s: nil when
	// it does not apply, [""] when it has no variants.
	Variants func(s *spec.Spec, t spec.Tool) []string
	// Kinds are the variants a spec's condition may name (nil: the family has none).
	Kinds []string
	// Describe fills in the condition's What and SuccessPossible, and says what it does.
	Describe func(s *spec.Spec, t spec.Tool, c *Condition) Info
	// Success are the family's success rules (possible.go): one for the family, and one
	// per variant that decides it on its own.
	Success []SuccessRule
	// Manual is how manual mode (chaos proxy) deals the family; nil: it does not.
	Manual *Manual
	// Skill is where chaos skill test plans the family; nil: it does not.
	Skill *SkillPlan
}

// Manual is a family as manual mode deals it: armed on the first call of the kind it
// applies to, on whatever real server the user set up.
type Manual struct {
	// Every says every call from the first hit on is hit too.
	Every bool
	// What says what the fault did, for the end of a run.
	What string
}

// EndsSession is the capability of a family that ends the trial's session when it
// fires: every later call is refused as the fired one was, until an operator's login
// revives the session (proxies/hub/login.go); the browser wall answers every later
// request to an intercepted URL with the family's answer.
type EndsSession interface {
	EndsSession()
}

// SimulatedOnly is the capability of a family that needs the simulated world: it stores
// somewhere else or stores an empty value, which a real server behind the wall cannot be
// made to do. No condition of it is made on a real server's tool.
type SimulatedOnly interface {
	SimulatedOnly()
}

// Lasting is the capability of a family whose fault, once it starts on the At-th call,
// lasts for the rest of the trial. Ajantik's `after: N` (N calls go through) is At N+1.
type Lasting interface {
	Lasting()
}

// StructuredDamager is the capability of a family that damages a real reply's structured
// content in its own way (the hub otherwise puts the damaged text there when it is a
// JSON object): DamageStructured is the structured content the agent gets.
type StructuredDamager interface {
	DamageStructured(real string) string
}

// Misdirects is the capability of a family whose fired write is stored, but not where it
// was asked: LandsAt is the key a write to key is stored under.
type Misdirects interface {
	LandsAt(key string) string
}

var (
	regMu    sync.RWMutex
	registry = map[string]Entry{}
)

// Register adds a family to the catalogue. Every family registers itself from the init
// of its own file; a second family by the same name, or an entry missing what every
// family must say, is a bug and panics.
func Register(e Entry) {
	switch {
	case e.Name == "" || e.Family == nil || e.Variants == nil || e.Describe == nil || e.Eligible == "":
		panic(fmt.Sprintf("faults: family %q registers without a name, Family, Variants, Describe or Eligible", e.Name))
	case !slices.ContainsFunc(e.Success, func(r SuccessRule) bool { return r.Fault == e.Name }):
		panic(fmt.Sprintf("faults: family %q registers without its success rule", e.Name))
	}
	regMu.Lock()
	defer regMu.Unlock()
	if _, ok := registry[e.Name]; ok {
		panic(fmt.Sprintf("faults: family %q registered twice", e.Name))
	}
	registry[e.Name] = e
}

// Unregister removes a family from the catalogue (a test that registered one).
func Unregister(name string) {
	regMu.Lock()
	defer regMu.Unlock()
	delete(registry, name)
}

// Lookup returns the family with that name.
func Lookup(name string) (Entry, bool) {
	regMu.RLock()
	defer regMu.RUnlock()
	e, ok := registry[name]
	return e, ok
}

// Families returns the registered families in Rank order (by name where ranks tie).
func Families() []Entry {
	regMu.RLock()
	out := make([]Entry, 0, len(registry))
	for _, e := range registry {
		out = append(out, e)
	}
	regMu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Rank != out[j].Rank {
			return out[i].Rank < out[j].Rank
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Names are the names of the registered families, in Rank order.
func Names() []string {
	var out []string
	for _, e := range Families() {
		out = append(out, e.Name)
	}
	return out
}

// has reports whether the family called name has capability C.
func has[C any](name string) bool {
	e, ok := Lookup(name)
	if !ok {
		return false
	}
	_, ok = e.Family.(C)
	return ok
}

// EndsTheSession reports whether the family called name ends the session when it fires.
func EndsTheSession(name string) bool { return has[EndsSession](name) }

func simulatedOnly(name string) bool { return has[SimulatedOnly](name) }

// LandsAt is the key under which a write to key is stored when family fired on it: key
// itself, but for a family that misdirects its writes.
func LandsAt(family, key string) string {
	if e, ok := Lookup(family); ok {
		if m, ok := e.Family.(Misdirects); ok {
			return m.LandsAt(key)
		}
	}
	return key
}

func lasting(name string) bool { return has[Lasting](name) }

// ManualFamilies are the families manual mode deals, in Rank order.
func ManualFamilies() []string {
	var out []string
	for _, e := range Families() {
		if e.Manual != nil {
			out = append(out, e.Name)
		}
	}
	return out
}

// catalogue is the registry as the spec loader asks it (spec.RegisterFamilies).
type catalogue struct{}

func init() { spec.RegisterFamilies(catalogue{}) }

func (catalogue) Families() []string { return Names() }

func (catalogue) Needs(family string) spec.Effect {
	e, _ := Lookup(family)
	return e.Needs
}

func (catalogue) Variants(family string) []string {
	e, _ := Lookup(family)
	return e.Kinds
}

func (catalogue) BrowserFamilies() []string { return BrowserFamilies() }
