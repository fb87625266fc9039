package faults

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/crashwall/chaos/spec"
)

// catalogueLine is one family as testdata/families.golden holds it: its entry and the
// capabilities its Family has.
func catalogueLine(e Entry) string {
	var caps []string
	if _, ok := e.Family.(EndsSession); ok {
		caps = append(caps, "ends-session")
	}
	if _, ok := e.Family.(SimulatedOnly); ok {
		caps = append(caps, "simulated-only")
	}
	if _, ok := e.Family.(Lasting); ok {
		caps = append(caps, "lasting")
	}
	if _, ok := e.Family.(BrowserFault); ok {
		caps = append(caps, "browser")
	}
	if _, ok := e.Family.(StructuredDamager); ok {
		caps = append(caps, "structured-damage")
	}
	if _, ok := e.Family.(Misdirects); ok {
		caps = append(caps, "misdirects")
	}
	manual, skill := "-", "-"
	if e.Manual != nil {
		manual = "dealt"
		if e.Manual.Every {
			manual += " every"
		}
	}
	switch {
	case e.Skill == nil:
	case e.Skill.Whole != nil:
		skill = "whole run"
	default:
		skill = fmt.Sprintf("%s #%d", e.Skill.Effect, e.Skill.Rank)
	}
	needs := string(e.Needs)
	if needs == "" {
		needs = "-"
	}
	return fmt.Sprintf("%-16s needs=%-5s variants=[%s] caps=[%s] manual=%s skill=%s ajantik=%v | %s",
		e.Name, needs, strings.Join(e.Kinds, " "), strings.Join(caps, " "), manual, skill, spec.AjantikFamily(e.Name), e.Eligible)
}

// TestCatalogueGolden: the families, in order, with what each registers and the
// capabilities it has, are testdata/families.golden (-update rewrites it). A new family
// is its own file and one line here.
func TestCatalogueGolden(t *testing.T) {
	var b strings.Builder
	for _, e := range Families() {
		b.WriteString(catalogueLine(e) + "\n")
	}
	golden := filepath.Join("testdata", "families.golden")
	if updateModelGoldens() {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./faults -run TestCatalogueGolden -update writes it)", err)
	}
	if b.String() != string(want) {
		t.Errorf("the catalogue is:\n%s\nwant (%s):\n%s", b.String(), golden, want)
	}
}

// TestCatalogueAsTheLoaderSeesIt: the spec loader's view of the families (names, needs,
// variants, the browser's) is the registry's.
func TestCatalogueAsTheLoaderSeesIt(t *testing.T) {
	var c catalogue
	if !slices.Equal(c.Families(), Names()) || len(Names()) == 0 {
		t.Errorf("the loader sees %v, the registry has %v", c.Families(), Names())
	}
	for _, e := range Families() {
		if c.Needs(e.Name) != e.Needs || !slices.Equal(c.Variants(e.Name), e.Kinds) {
			t.Errorf("%s: the loader sees needs %q variants %v, the entry says %q %v", e.Name, c.Needs(e.Name), c.Variants(e.Name), e.Needs, e.Kinds)
		}
		_, browser := e.Family.(BrowserFault)
		if browser != slices.Contains(c.BrowserFamilies(), e.Name) {
			t.Errorf("%s: a browser fault %v, but the loader's browser families are %v", e.Name, browser, c.BrowserFamilies())
		}
	}
	// Every family needs what its Variants say: a family that needs writes applies to
	// no tool that does not write.
	for _, e := range Families() {
		if e.Needs == "" {
			continue
		}
		for _, eff := range []spec.Effect{spec.EffectNone, spec.EffectRead, spec.EffectWrite} {
			s := &spec.Spec{Tools: []spec.Tool{{Name: "x", Effect: eff}, {Name: "w", Effect: spec.EffectWrite}}}
			if e.Variants(s, s.Tools[0]) != nil && eff != e.Needs {
				t.Errorf("%s needs %s but applies to a tool with effect %s", e.Name, e.Needs, eff)
			}
		}
	}
}

// TestRegisterRefuses: a second family by a name, or one without its success rule, is a
// bug caught at start.
func TestRegisterRefuses(t *testing.T) {
	ps, _ := Lookup("phantom_success")
	noRule := ps
	noRule.Name, noRule.Success = "no_rule", nil
	for name, e := range map[string]Entry{"twice": ps, "no success rule": noRule, "no name": {Family: ps.Family}} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("Register did not refuse it")
				}
			}()
			Register(e)
		})
	}
	if _, ok := Lookup("no_rule"); ok {
		t.Errorf("a refused family was registered")
	}
}
