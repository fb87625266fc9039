package model

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/proxies/httpwall"
	"github.com/crashwall/chaos/proxies/llm"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/tests/testkit"
)

const runTimeout = 15 * time.Minute

// agentsSpec is the spec of the Agents SDK agent, clean as written.
func agentsSpec(t testing.TB) string {
	t.Helper()
	return filepath.Join(repoRoot, "tests", "model", "testdata", "agents-sdk.yaml")
}

// faultedSpec writes the spec with model.fault set to fault, and nothing else changed,
// into dir.
func faultedSpec(t testing.TB, dir, fault string) string {
	t.Helper()
	b, err := os.ReadFile(agentsSpec(t))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if !strings.Contains(text, "\n  fault: none\n") {
		t.Fatal("the spec has no `fault: none` line to replace")
	}
	text = strings.Replace(text, "\n  fault: none\n", "\n  fault: "+fault+"\n  rate: 1\n", 1)
	path := filepath.Join(dir, "agents-sdk-"+fault+".yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

type manifest struct {
	RunID string `json:"run_id"`
	Spec  struct {
		Identity string `json:"identity"`
	} `json:"spec"`
	PairedWith string `json:"paired_with"`
	Model      struct {
		Armed   bool              `json:"armed"`
		Fault   string            `json:"fault"`
		Rate    float64           `json:"rate"`
		Steps   []string          `json:"steps"`
		Proxies map[string]string `json:"proxies"`
		Calls   int               `json:"calls"`
		Fired   int               `json:"fired"`
		Note    string            `json:"note"`
	} `json:"model"`
}

// TestAgentsSDKAgent runs an agent built on the OpenAI Agents SDK for JavaScript (tools
// from the wall over MCP, model through the proxy in front of the stand-in) as the agent
// command of `chaos run`: once clean, once with tool_schema_single at its update_ticket
// step, paired on the same seeds. The fault changes what the agent did (update_ticket
// called with the broken arguments, refused by the wall; the priority never set; the agent
// says it is done), the clean run does not, and `chaos diff` compares them with McNemar's
// test.
func TestAgentsSDKAgent(t *testing.T) {
	node(t)
	standin := startStandin(t, filepath.Join(repoRoot, "proxies", "llm", "testdata", "support-ticket.script.yaml"))
	env := testEnv(t, "CHAOS_STANDIN_URL="+standin)
	data, runs := t.TempDir(), t.TempDir()
	cleanDir, faultedDir := filepath.Join(runs, "clean"), filepath.Join(runs, "faulted")

	r := runChaos(t, env, runTimeout, "run", agentsSpec(t), "--only", "clean", "--data-dir", data, "--out", cleanDir)
	r.MustSucceed(t, "chaos run (clean)")
	faulted := faultedSpec(t, t.TempDir(), "tool_schema_single")
	r = runChaos(t, env, runTimeout, "run", faulted, "--only", "clean", "--data-dir", data, "--out", faultedDir, "--pair-with", "latest")
	r.MustSucceed(t, "chaos run (faulted)")
	if !regexp.MustCompile(`(?m)^paired with run \S+ \(` + regexp.QuoteMeta(cleanDir) + `\): 2 of 2 trials reuse its seeds$`).MatchString(r.Stdout) {
		t.Errorf("chaos run --pair-with latest did not say it paired with the clean run:\n%s", r.Stdout)
	}

	var clean, fault []run.TrialResult
	testkit.ReadJSON(t, filepath.Join(cleanDir, "verdicts.json"), &clean)
	testkit.ReadJSON(t, filepath.Join(faultedDir, "verdicts.json"), &fault)
	if len(clean) != 2 || len(fault) != 2 {
		t.Fatalf("%d clean and %d faulted trials, want 2 each", len(clean), len(fault))
	}
	for i := range clean {
		c, f := clean[i], fault[i]
		if c.ID != f.ID || c.Seed != f.Seed {
			t.Errorf("trial %s seed %d, paired trial %s seed %d: want the same", c.ID, c.Seed, f.ID, f.Seed)
		}
		// Clean: the agent did the task and said so.
		if c.Verdict != "correct" || !c.WorldOK || c.Model == nil || c.Model.Calls != 4 || c.Model.Fired != 0 || c.Model.Fault != "none" {
			t.Errorf("clean trial %s: verdict %s (%s), world ok %v, model %+v", c.ID, c.Verdict, c.Reason, c.WorldOK, c.Model)
		}
		// Faulted: the broken call never set the priority, and the agent still says done.
		if f.Verdict != "silent_wrong" || f.WorldOK || f.Model == nil || f.Model.Fired != 1 || f.Model.Fault != "tool_schema_single" {
			t.Errorf("faulted trial %s: verdict %s (%s), world ok %v, model %+v", f.ID, f.Verdict, f.Reason, f.WorldOK, f.Model)
		}
		if !c.Outcomes["says_done"] || c.Outcomes["priority_not_set"] || !f.Outcomes["says_done"] || !f.Outcomes["priority_not_set"] {
			t.Errorf("outcomes: clean %v, faulted %v", c.Outcomes, f.Outcomes)
		}
		checkCleanRecord(t, filepath.Join(cleanDir, "trials", filepath.FromSlash(c.ID), "record.jsonl"))
		checkFaultedRecord(t, filepath.Join(faultedDir, "trials", filepath.FromSlash(f.ID), "record.jsonl"))
	}

	// The manifests say what was armed: nothing in the clean run.
	var mc, mf manifest
	testkit.ReadJSON(t, filepath.Join(cleanDir, "manifest.json"), &mc)
	testkit.ReadJSON(t, filepath.Join(faultedDir, "manifest.json"), &mf)
	if mc.Model.Armed || mc.Model.Fault != "none" || !strings.HasPrefix(mc.Model.Note, "nothing armed") || len(mc.Model.Proxies) != 2 {
		t.Errorf("clean manifest model: %+v", mc.Model)
	}
	if !mf.Model.Armed || mf.Model.Fault != "tool_schema_single" || mf.Model.Rate != 1 || !slices.Equal(mf.Model.Steps, []string{"update_ticket"}) ||
		len(mf.Model.Proxies) != 2 || mf.Model.Calls != 8 || mf.Model.Fired != 2 {
		t.Errorf("faulted manifest model: %+v", mf.Model)
	}
	for id, u := range mf.Model.Proxies {
		if !regexp.MustCompile(`^http://127\.0\.0\.1:\d+` + httpwall.ModelPrefix + `$`).MatchString(u) {
			t.Errorf("trial %s: proxy address %q", id, u)
		}
	}
	if mc.Spec.Identity == "" || mc.Spec.Identity != mf.Spec.Identity || mf.PairedWith != cleanDir {
		t.Errorf("identities %q and %q, paired with %q; want the same identity, paired with %s", mc.Spec.Identity, mf.Spec.Identity, mf.PairedWith, cleanDir)
	}

	r = runChaos(t, env, time.Minute, "diff", cleanDir, faultedDir)
	r.MustSucceed(t, "chaos diff")
	if !strings.Contains(r.Stdout, "McNemar") || !regexp.MustCompile(`(?m)^main\s+clean\s+0/2 = 0% \[[^]]*\]\s+2/2 = 100% \[[^]]*\]\s+0\s+2\s+0\s`).MatchString(r.Stdout) {
		t.Errorf("chaos diff does not name McNemar's test or show the two worse pairs:\n%s", r.Stdout)
	}
	// The declared outcomes: the priority was lost in both faulted trials; both runs say done.
	for _, re := range []string{
		`(?m)^main\s+clean\s+priority_not_set\s+0/2 = 0% \[[^]]*\]\s+2/2 = 100% \[[^]]*\]\s+0\s+2\s+0\s`,
		`(?m)^main\s+clean\s+says_done\s+0/2 = 0% \[[^]]*\]\s+0/2 = 0% \[[^]]*\]\s+0\s+0\s+2\s`,
	} {
		if !regexp.MustCompile(re).MatchString(r.Stdout) {
			t.Errorf("chaos diff has no row matching %s:\n%s", re, r.Stdout)
		}
	}
}

// checkCleanRecord: the agent read the email, set the priority and the team as the
// stand-in said, with no fault fired.
func checkCleanRecord(t *testing.T, path string) {
	t.Helper()
	l, err := record.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var tools, positions []string
	for _, r := range l.Calls() {
		if r.Transport == llm.TransportLLM {
			positions = append(positions, position(t, r))
			if r.Hit != nil && r.Hit.Fired {
				t.Errorf("%s: a model fault fired in the clean run: %+v", path, r)
			}
			continue
		}
		tools = append(tools, r.Tool+" "+string(r.Args))
	}
	if want := []string{"read_email {}", `update_ticket {"field":"priority","value":"urgent"}`, `update_ticket {"field":"team","value":"payments"}`}; !slices.Equal(tools, want) {
		t.Errorf("%s: tool calls %q, want %q", path, tools, want)
	}
	if want := []string{"read_email", "update_ticket", "update_team", "report"}; !slices.Equal(positions, want) {
		t.Errorf("%s: model calls at %q, want %q", path, positions, want)
	}
	if l.End == nil || l.End.FinalState["priority"] != "urgent" || l.End.FinalState["team"] != "payments" {
		t.Errorf("%s: final state %+v", path, l.End)
	}
}

// checkFaultedRecord: the fault fired once, on the model call at update_ticket; the agent
// then called update_ticket with the broken arguments, which the wall refused; the
// priority stayed normal.
func checkFaultedRecord(t *testing.T, path string) {
	t.Helper()
	l, err := record.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fired := l.Fired()
	if len(fired) != 1 || fired[0].Transport != llm.TransportLLM || position(t, fired[0]) != "update_ticket" ||
		fired[0].Hit.Family != "tool_schema_single" || !strings.Contains(fired[0].Reply, `call update_ticket {"wrong_param": "unexpected_value"}`) {
		t.Errorf("%s: fired rows %+v, want the model call at update_ticket answering update_ticket with wrong_param", path, fired)
	}
	var broken bool
	for _, r := range l.Rows {
		if r.Type == record.TypeRejected && r.Tool == "update_ticket" && string(r.Args) == `{"wrong_param":"unexpected_value"}` {
			broken = true
		}
	}
	if !broken {
		t.Errorf("%s: no update_ticket call with the broken arguments in the record", path)
	}
	if l.End == nil || l.End.FinalState["priority"] != "normal" || l.End.FinalState["team"] != "payments" {
		t.Errorf("%s: final state %+v, want priority normal (never set), team payments", path, l.End)
	}
}

func position(t *testing.T, r record.Row) string {
	t.Helper()
	var a struct {
		Position string `json:"position"`
	}
	if err := json.Unmarshal(r.Args, &a); err != nil {
		t.Fatalf("model call row args %s: %v", r.Args, err)
	}
	return a.Position
}

// TestRunRefusals: what `chaos run` refuses before it starts anything (exit 1), and a
// faulted run in which no model call reached the proxy (exit 3, saying so).
func TestRunRefusals(t *testing.T) {
	node(t)
	env := testEnv(t, "CHAOS_STANDIN_URL=http://127.0.0.1:9")
	dir := t.TempDir()

	t.Run("unknown model fault, dry run", func(t *testing.T) {
		bad := faultedSpec(t, dir, "tool_schema_singel")
		r := runChaos(t, env, time.Minute, "run", bad, "--dry-run")
		if r.Code != 1 || !strings.Contains(r.Stderr, `unknown model fault "tool_schema_singel" (did you mean tool_schema_single?) (known: llm_error_single, `) ||
			!regexp.MustCompile(`agents-sdk-tool_schema_singel\.yaml:\d+: `).MatchString(r.Stderr) {
			t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and a file:line problem listing the known faults", r.Code, r.Stderr)
		}
	})

	t.Run("upstream variable not set", func(t *testing.T) {
		r := runChaos(t, testEnv(t), time.Minute, "run", agentsSpec(t), "--dry-run")
		if r.Code != 1 || !strings.Contains(r.Stderr, "the environment variable CHAOS_STANDIN_URL is not set") {
			t.Errorf("exit %d, stderr:\n%s", r.Code, r.Stderr)
		}
	})

	t.Run("pair with a run of another spec", func(t *testing.T) {
		other := filepath.Join(dir, "other")
		// A finished run folder of the same spec with another seed: its trial keeps its spec.
		b, _ := os.ReadFile(agentsSpec(t))
		trial := filepath.Join(other, "trials", "main", "clean", "1")
		if err := os.MkdirAll(trial, 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(trial, "spec.yaml"), []byte(strings.Replace(string(b), "seed: 11", "seed: 12", 1)), 0o644)
		os.WriteFile(filepath.Join(other, "manifest.json"), []byte(`{"run_id": "r1", "spec": {"name": "agents-sdk"}, "model": {"armed": false}}`), 0o644)
		os.WriteFile(filepath.Join(other, "verdicts.json"), []byte(`[{"id": "main/clean/1", "cell": "main", "condition": "clean", "rep": 1, "seed": 5}]`), 0o644)
		r := runChaos(t, env, time.Minute, "run", faultedSpec(t, dir, "tool_error_single"), "--dry-run", "--pair-with", other)
		if r.Code != 1 || !strings.Contains(r.Stderr, "its spec differs from") || !strings.Contains(r.Stderr, "in more than the model table: seed") {
			t.Errorf("exit %d, stderr:\n%s", r.Code, r.Stderr)
		}
	})

	t.Run("no model call reached the proxy", func(t *testing.T) {
		// The first trial that ran to its end with no model call proves the fault can never
		// be armed: the run stops there, exit 3, naming the log file.
		out := filepath.Join(t.TempDir(), "out")
		r := runChaos(t, env, runTimeout, "run", faultedSpec(t, dir, "tool_error_single"), "--only", "clean", "--reps", "3", "--concurrency", "1",
			"--data-dir", t.TempDir(), "--out", out, "--", "echo Done.")
		if r.Code != 3 || !strings.Contains(r.Stderr, "the run stopped: trial main/clean/1 ran to its end with no model call at the model proxy, so model fault tool_error_single can never be armed in this run") ||
			!strings.Contains(r.Stderr, "details are in ") {
			t.Fatalf("exit %d, stderr:\n%s\nwant exit 3 saying the fault can never be armed, with the log file", r.Code, r.Stderr)
		}
		// The trial ran to its end and has no verdict, the agent never having met the model
		// proxy (report.Reach); the others never started.
		var results []run.TrialResult
		testkit.ReadJSON(t, filepath.Join(out, "verdicts.json"), &results)
		if len(results) != 3 || results[0].Outcome != run.OutcomeCompleted || results[0].Verdict != "no_verdict" ||
			results[0].Unreached != "no_model_call" ||
			!strings.HasPrefix(results[0].VerdictWhy, "no model call reached the model proxy at {llm_url} (http://127.0.0.1:") ||
			results[1].Outcome != run.OutcomeAborted || results[2].Outcome != run.OutcomeAborted {
			t.Errorf("results %+v", results)
		}
	})
}
