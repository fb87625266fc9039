package spec

import (
	"strings"
	"testing"
)

func TestProbeOverrules(t *testing.T) {
	base := "name: o\ntask: t\nagent: {command: x}\ntools: [{name: w, effect: write}]\nprobes:\n"
	s, err := Parse("o.yaml", []byte(base+"  - {command: ./check.sh, overrules: true}\n  - {command: ./other.sh}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p := s.AllProbes(); len(p) != 2 || !p[0].Overrules || p[1].Overrules {
		t.Errorf("probes %+v, want the first overruling", p)
	}
	_, err = Parse("o.yaml", []byte(base+"  - {mcp: {server: s, tool: t, equals: 1}, overrules: true}\n"))
	if err == nil || !strings.Contains(err.Error(), "overrules is for a command check") {
		t.Errorf("an overruling mcp probe: %v, want it refused", err)
	}
}
