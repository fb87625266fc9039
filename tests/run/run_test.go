package run_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/crashwall/chaos/proxies/stdio"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/tests/testkit"
)

// TestRunEndToEnd runs the support-ticket example, every condition once in each of its
// cells, with the blind reference agent on the embedded server, and reads the run folder;
// then the ways `chaos run` refuses to start.
func TestRunEndToEnd(t *testing.T) {
	env := testkit.Env(t)
	conds := conditionIDs(t, env, exampleSpec)
	if len(conds) != 19 {
		t.Fatalf("the example has %d conditions, want 19: %v", len(conds), conds)
	}
	cells := exampleCells(t)
	const concurrency = 4
	plan := planLine(cells, conds, concurrency)

	t.Run("every condition", func(t *testing.T) {
		data, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
		r := runChaos(t, env, runTimeout, "run", exampleSpec, "--data-dir", data, "--out", out,
			"--reps", "1", "--concurrency", fmt.Sprint(concurrency), "--", blindAgent())
		r.MustSucceed(t, "chaos run")
		if first, _, _ := strings.Cut(r.Stdout, "\n"); first != plan {
			t.Errorf("first line: %q\nwant        %q", first, plan)
		}
		runIDOf(t, r.Stdout)

		ids := trialIDs(cells, conds)
		results := readVerdicts(t, out, ids)
		if dirs := trialFolders(t, out); len(dirs) != len(ids) {
			t.Errorf("%d trial folders, want one per planned trial (%d): %v", len(dirs), len(ids), dirs)
		}
		for _, id := range ids {
			checkTrialFolder(t, out, id)
			if r := results[id]; r.Outcome != run.OutcomeCompleted {
				t.Errorf("trial %s: outcome %q (%s), want %s", id, r.Outcome, r.Reason, run.OutcomeCompleted)
			}
		}
		// The blind agent writes what the task asks: the world ends right without a fault,
		// and wrong when the write is acknowledged and dropped.
		for _, cell := range cells {
			if r := results[cell+"/clean/1"]; !r.WorldOK {
				t.Errorf("%s: the clean trial's world is wrong: %+v", r.ID, r.Checks)
			}
			if r := results[cell+"/phantom_success@update_ticket/1"]; r.WorldOK {
				t.Errorf("%s: the world is right: the fault did not take", r.ID)
			}
		}

		var m struct {
			Plan     string `json:"plan"`
			Trials   int    `json:"trials"`
			Finished int    `json:"finished"`
		}
		b, err := os.ReadFile(filepath.Join(out, "manifest.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("manifest.json: %v", err)
		}
		if m.Plan != plan || m.Trials != len(ids) || m.Finished != len(ids) {
			t.Errorf("manifest.json: plan %q, %d trials, %d finished; want %q, %d, %d", m.Plan, m.Trials, m.Finished, plan, len(ids), len(ids))
		}
		if !exists(filepath.Join(out, "summary.txt")) {
			t.Error("no summary.txt")
		}
	})

	t.Run("dry run starts nothing", func(t *testing.T) {
		data, out := filepath.Join(t.TempDir(), "data"), filepath.Join(t.TempDir(), "out")
		r := runChaos(t, env, runTimeout, "run", exampleSpec, "--dry-run", "--data-dir", data, "--out", out,
			"--reps", "1", "--concurrency", fmt.Sprint(concurrency), "--", blindAgent())
		r.MustSucceed(t, "chaos run --dry-run")
		// The plan, then each cell's agent command as its trials will run it.
		want := plan + "\n"
		// The command refers to its values through CHAOS_* variables; their values follow.
		relay := filepath.Join(filepath.Dir(chaosBin), "chaos-relay")
		wall := stdio.RelayCommand(relay, filepath.Join("WORKROOT", "wall-ID", "hub.sock"))
		for _, cell := range cells {
			want += "agent " + cell + " (sh -c): " + strings.NewReplacer("{wall}", `"$CHAOS_WALL"`, "{spec}", `"$CHAOS_SPEC"`).Replace(blindAgent()) + "\n"
			want += "  CHAOS_SPEC=" + spec.ShellQuote(exampleSpec) + "\n  CHAOS_WALL=" + spec.ShellQuote(wall) + "\n"
		}
		if r.Stdout != want {
			t.Errorf("stdout: %q\nwant    %q", r.Stdout, want)
		}
		for _, dir := range []string{out, data} {
			if exists(dir) {
				t.Errorf("--dry-run created %s", dir)
			}
		}
	})

	// A spec with a problem: the example with a misspelt fault family, reported at its line.
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	badLine := writeMisspeltSpec(t, bad)
	tests := []struct {
		name string
		args []string
		want []*regexp.Regexp
	}{{
		name: "spec with a problem",
		args: []string{bad},
		want: []*regexp.Regexp{regexp.MustCompile(`(?m)^chaos: ` + regexp.QuoteMeta(bad) + fmt.Sprintf(`:%d: unknown fault family "phantom_sucess"`, badLine))},
	}, {
		name: "unknown condition",
		args: []string{exampleSpec, "--only", "nope"},
		want: conditionsListed(conds),
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data, out := filepath.Join(t.TempDir(), "data"), filepath.Join(t.TempDir(), "out")
			args := append([]string{"run"}, tc.args...)
			args = append(args, "--data-dir", data, "--out", out, "--", blindAgent())
			r := runChaos(t, env, runTimeout, args...)
			if r.Code != 1 {
				t.Fatalf("exit code %d, want 1\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
			}
			for _, re := range tc.want {
				if !re.MatchString(r.Stderr) {
					t.Errorf("stderr does not match %s:\n%s", re, r.Stderr)
				}
			}
			if exists(out) {
				t.Errorf("a refused run created its folder %s", out)
			}
		})
	}
}

// writeMisspeltSpec writes the example with "faults: [all]" misspelt to path and returns
// that line's number.
func writeMisspeltSpec(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(exampleSpec)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	line, found := 0, 0
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		line++
		text := sc.Text()
		if text == "faults: [all]" {
			text, found = "faults: [phantom_sucess]", line
		}
		out.WriteString(text + "\n")
	}
	if found == 0 {
		t.Fatal(`the example has no "faults: [all]" line to misspell`)
	}
	if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return found
}

// conditionsListed matches the --only message and every known condition in it.
func conditionsListed(conds []string) []*regexp.Regexp {
	res := []*regexp.Regexp{regexp.MustCompile(`--only "nope": no such condition in support-ticket \(conditions: `)}
	for _, c := range conds {
		res = append(res, regexp.MustCompile(`[ (]`+regexp.QuoteMeta(c)+`[,)]`))
	}
	return res
}
