package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/trial"
)

// TestContainerChaosDynamic: a plan whose agent runs in a container and uses {chaos} says
// when the chaos binary mounted there is linked dynamically, with the fix; a static (or
// not ELF) binary, a command without {chaos}, or an agent on the host says nothing.
func TestContainerChaosDynamic(t *testing.T) {
	b, err := os.ReadFile(exampleSpec)
	if err != nil {
		t.Fatal(err)
	}
	docker, err := spec.Parse("docker.yaml", []byte(strings.Replace(string(b), "\nagent:\n", "\nagent:\n  runtime: docker\n  image: my-agent:1\n", 1)))
	if err != nil {
		t.Fatal(err)
	}
	host, err := spec.Parse("host.yaml", b)
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "chaos")
	os.WriteFile(script, []byte("#!/bin/sh\n"), 0o755)
	const dynamic = "/bin/sh" // linked dynamically on glibc hosts
	if trial.StaticBinary(dynamic) == nil {
		t.Skipf("%s is no dynamically linked ELF binary here", dynamic)
	}
	tests := []struct {
		name     string
		s        *spec.Spec
		template string
		bin      string
		warn     bool
	}{
		{"dynamic chaos in a container", docker, "{chaos} wall", dynamic, true},
		{"no {chaos} in the command", docker, "my-agent {task}", dynamic, false},
		{"on the host", host, "{chaos} wall", dynamic, false},
		{"not an ELF binary", docker, "{chaos} wall", script, false},
	}
	for _, tt := range tests {
		got := containerChaos(tt.s, tt.template, tt.bin)
		if tt.warn != (got != "") || tt.warn && !strings.Contains(got, "linked dynamically") || tt.warn && !strings.Contains(got, "CGO_ENABLED=0") {
			t.Errorf("%s: %q", tt.name, got)
		}
	}
}
