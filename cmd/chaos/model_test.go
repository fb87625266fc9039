package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/faults"
)

// TestFaultsModel: `chaos faults --model` lists the catalogue, one line each, and as
// JSON; with a spec as well, or with neither, it is bad input.
func TestFaultsModel(t *testing.T) {
	var out bytes.Buffer
	if err := faultsRun(&FaultsOptions{IO: &IOStreams{Out: &out}, Model: true}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	cat := faults.ModelFaults()
	// A title, a blank line, the header, a line per fault, a blank line and the note on
	// which part of a turn a fault needs.
	if len(lines) != len(cat)+5 || lines[0] != "20 model faults (model.fault in a spec; each mutates one response at the eligible positions)" ||
		!strings.HasPrefix(lines[2], "FAULT ") || !strings.Contains(lines[len(lines)-1], "fails the episode") {
		t.Fatalf("chaos faults --model printed:\n%s", out.String())
	}
	for i, f := range cat {
		if fields := strings.Fields(lines[i+3]); fields[0] != f.Name || !strings.HasSuffix(lines[i+3], "  "+f.What) {
			t.Errorf("line %d: %q, want %s and %q", i+4, lines[i+3], f.Name, f.What)
		}
	}

	out.Reset()
	if err := faultsRun(&FaultsOptions{IO: &IOStreams{Out: &out}, Model: true, JSON: true}); err != nil {
		t.Fatal(err)
	}
	var views []struct{ Name, What string }
	if err := json.Unmarshal(out.Bytes(), &views); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range views {
		names = append(names, v.Name)
		if v.What == "" {
			t.Errorf("%s: no description", v.Name)
		}
	}
	if !slices.Equal(names, faults.ModelFaultNames()) || !strings.Contains(out.String(), `replaced by {\"wrong_param\": \"unexpected_value\"}`) {
		t.Errorf("--json:\n%s", out.String())
	}

	for _, args := range [][]string{{}, {"--model", exampleSpec}} {
		cmd := NewCmdFaults(&IOStreams{Out: io.Discard, ErrOut: io.Discard}, nil)
		cmd.SetArgs(args)
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		if err := cmd.Execute(); ExitCode(err) != ExitBadInput {
			t.Errorf("chaos faults %q: %v (exit %d), want exit 1", args, err, ExitCode(err))
		}
	}
}

// TestModelStandin: `chaos model standin` prints its URL, serves the script there
// under any prefix, and stops on cancel.
func TestModelStandin(t *testing.T) {
	script := filepath.Join(t.TempDir(), "script.yaml")
	os.WriteFile(script, []byte("- {when: start, text: Hello from the stand-in.}\n"), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- standinRun(ctx, &StandinOptions{IO: &IOStreams{Out: &out}, Script: script, Listen: "127.0.0.1:0", Ready: func(u string) { ready <- u }})
	}()
	var url string
	select {
	case url = <-ready:
	case err := <-done:
		t.Fatalf("the stand-in stopped: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the stand-in did not start")
	}
	if want := "stand-in model: " + url + "\n  OpenAI base URL:    " + url + "/v1\n  Anthropic base URL: " + url + "\nready; Ctrl-C stops\n"; out.String() != want {
		t.Errorf("printed %q, want %q", out.String(), want)
	}
	for _, path := range []string{"/v1/chat/completions", "/chat/completions"} {
		resp, err := http.Post(url+path, "application/json", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !bytes.Contains(b, []byte("Hello from the stand-in.")) {
			t.Errorf("POST %s: %d %s", path, resp.StatusCode, b)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("stopped with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stand-in did not stop on cancel")
	}

	err := standinRun(context.Background(), &StandinOptions{IO: &IOStreams{Out: io.Discard}, Script: filepath.Join(t.TempDir(), "nope.yaml"), Listen: "127.0.0.1:0"})
	if ExitCode(err) != ExitBadInput {
		t.Errorf("a missing script: %v, want exit 1", err)
	}
}
