package model

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/tests/testkit"
)

// costSpec is the support-ticket task for tests/model/testdata/cost-agent.py, on the
// APIs and stream modes of its axes, with prices for the stand-in's model names.
func costSpec(t *testing.T, dir, name, extra string, axes string) string {
	t.Helper()
	text := `name: ` + name + `
task: Read the customer's email about ticket T-4821 and set the ticket's priority and team the way the email asks.
agent:
  command: python3 "$CHAOS_TESTDATA/cost-agent.py" {api} {stream} {llm_url} {wall_url}
  timeout: 3m
model:
  upstream: ${CHAOS_STANDIN_URL}
  prices:
    gpt-test: {input: 2, output: 8, cache_read: 0.5}
    claude-test: {input: 3, output: 15, cache_read: 0.3, cache_write: 3.75}
axes:
` + axes + `
tools:
  - {name: read_email, effect: none, reply: '{"ticket": "T-4821", "body": "urgent, payments team"}'}
  - {name: update_ticket, effect: write, key_field: field, value_field: value}
  - {name: get_ticket_field, effect: read, key_field: field, value_field: value}
initial_state: {priority: normal, team: accounts}
faults: [phantom_success]
state_checks:
  - {key: priority, equals: urgent}
  - {key: team, equals: payments}
seed: 5
` + extra
	p := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// declaredUsage is the usage tests/model/testdata/cost.script.yaml declares, step by step.
var declaredUsage = []struct{ in, out, cacheRead, cacheWrite int64 }{
	{1200, 31, 400, 800}, {1500, 45, 2000, 0}, {90, 52, 2500, 17}, {1900, 120, 0, 0},
}

func readVerdicts(t *testing.T, out string) []run.TrialResult {
	t.Helper()
	var rs []run.TrialResult
	testkit.ReadJSON(t, filepath.Join(out, "verdicts.json"), &rs)
	return rs
}

// TestCost: a real agent process talking to the model proxy in front of the stand-in
// model, in a chaos run on Temporal:
//
//   - each trial's tokens and money equal the sum of what the stand-in declared, on the
//     three APIs, streamed and not; chaos run, chaos show and report.html give the cost
//     per cell and for the run;
//   - a trial that crosses limits.max_cost_usd is aborted by the watcher's signal and
//     recorded as such (the agent would otherwise wait until its timeout);
//   - a run with --budget stops starting trials at the right point and says so.
func TestCost(t *testing.T) {
	standin := startStandin(t, filepath.Join(repoRoot, "tests", "model", "testdata", "cost.script.yaml"))
	env := testEnv(t, "CHAOS_STANDIN_URL="+standin, "CHAOS_TESTDATA="+filepath.Join(repoRoot, "tests", "model", "testdata"))
	dir := t.TempDir()
	data := filepath.Join(dir, "data")

	// What a trial must have spent, per API.
	var tokensOpenAI, tokensAnthropic [4]int64 // in, out, cache read, cache write
	var usdOpenAI, usdAnthropic float64
	for _, d := range declaredUsage {
		tokensOpenAI[0] += d.in
		tokensOpenAI[1] += d.out
		tokensOpenAI[2] += d.cacheRead // OpenAI has no cache writes: the stand-in declares none
		tokensAnthropic[0] += d.in
		tokensAnthropic[1] += d.out
		tokensAnthropic[2] += d.cacheRead
		tokensAnthropic[3] += d.cacheWrite
		usdOpenAI += (float64(d.in)*2 + float64(d.out)*8 + float64(d.cacheRead)*0.5) / 1e6
		usdAnthropic += (float64(d.in)*3 + float64(d.out)*15 + float64(d.cacheRead)*0.3 + float64(d.cacheWrite)*3.75) / 1e6
	}

	t.Run("tokens and money per trial", func(t *testing.T) {
		out := filepath.Join(dir, "all")
		r := runChaos(t, env, runTimeout, "run", costSpec(t, dir, "cost", "", "  api: [chat, responses, messages]\n  stream: [plain, sse]"),
			"--only", "clean", "--concurrency", "2", "--data-dir", data, "--out", out)
		r.MustSucceed(t, "chaos run")
		results := readVerdicts(t, out)
		if len(results) != 6 {
			t.Fatalf("%d trials, want 6", len(results))
		}
		var total float64
		for _, res := range results {
			want, usd := tokensOpenAI, usdOpenAI
			if strings.Contains(res.Cell, "api=messages") {
				want, usd = tokensAnthropic, usdAnthropic
			}
			c := res.Cost
			if c == nil {
				t.Errorf("%s: no cost in its result (verdict %s, %s)", res.Cell, res.Verdict, res.Reason)
				continue
			}
			got := [4]int64{c.Input, c.Output, c.CacheRead, c.CacheWrite}
			if got != want || c.Calls != 4 || c.Unread != 0 || len(c.Unpriced) != 0 {
				t.Errorf("%s: tokens %v over %d calls (unread %d, unpriced %v), want %v over 4", res.Cell, got, c.Calls, c.Unread, c.Unpriced, want)
			}
			if math.Abs(c.USD-usd) > 2e-6 {
				t.Errorf("%s: $%v, want $%v", res.Cell, c.USD, usd)
			}
			if res.Verdict != "correct" {
				t.Errorf("%s: verdict %s (%s), want correct", res.Cell, res.Verdict, res.VerdictWhy)
			}
			total += c.USD
		}
		runLine := fmt.Sprintf("$%.2f over 6 trial(s)", total)
		if !strings.Contains(r.Stdout, "cost: "+runLine) {
			t.Errorf("chaos run does not say the run cost %s:\n%s", runLine, r.Stdout)
		}
		show := runChaos(t, env, runTimeout, "show", out)
		show.MustSucceed(t, "chaos show")
		for _, want := range []string{"\ncost\n", "api=messages,stream=sse: ", "run: " + runLine} {
			if !strings.Contains(show.Stdout, want) {
				t.Errorf("chaos show lacks %q:\n%s", want, show.Stdout)
			}
		}
		html, _ := os.ReadFile(filepath.Join(out, "report.html"))
		if !strings.Contains(string(html), `"costs":[`) || !strings.Contains(string(html), runLine) {
			t.Errorf("report.html has no cost table with %s", runLine)
		}
	})

	t.Run("max_cost_usd aborts the trial", func(t *testing.T) {
		// The first Anthropic call costs $0.0072, the second brings it to $0.0130: over $0.01.
		out := filepath.Join(dir, "limit")
		spec := costSpec(t, dir, "cost-limit", "limits: {max_cost_usd: 0.01}\n", "  api: [messages]\n  stream: [sse]")
		lingering := append(append([]string(nil), env...), "COST_AGENT_LINGER=1")
		r := runChaos(t, lingering, runTimeout, "run", spec, "--only", "clean", "--data-dir", data, "--out", out)
		results := readVerdicts(t, out)
		if len(results) != 1 {
			t.Fatalf("%d trials, want 1\n%s\n%s", len(results), r.Stdout, r.Stderr)
		}
		res := results[0]
		if res.Outcome != run.OutcomeAborted || !strings.Contains(res.Reason, "limits.max_cost_usd") || !strings.Contains(res.Reason, "$0.01") {
			t.Errorf("outcome %s (%s), want aborted by limits.max_cost_usd", res.Outcome, res.Reason)
		}
		if res.Cost == nil || res.Cost.USD <= 0.01 || res.Cost.Calls < 2 {
			t.Errorf("cost %+v, want over $0.01 after at least two calls", res.Cost)
		}
	})

	t.Run("budget stops starting trials", func(t *testing.T) {
		// Anthropic trials cost usdAnthropic each; one at a time, a budget of 2.5 trials runs
		// two and leaves the other two unstarted.
		out := filepath.Join(dir, "budget")
		spec := costSpec(t, dir, "cost-budget", "replicates: 4\n", "  api: [messages]\n  stream: [plain]")
		budget := fmt.Sprintf("%.6f", usdAnthropic*2.5)
		r := runChaos(t, env, runTimeout, "run", spec, "--only", "clean", "--concurrency", "1", "--budget", budget, "--data-dir", data, "--out", out)
		results := readVerdicts(t, out)
		ran, notStarted := 0, 0
		for _, res := range results {
			switch {
			case res.Outcome == run.OutcomeCompleted && res.Cost != nil:
				ran++
			case res.Outcome == run.OutcomeAborted && strings.Contains(res.Reason, "not started: 2 trial(s) not started") && strings.Contains(res.Reason, "--budget"):
				notStarted++
			default:
				t.Errorf("trial %s: %s (%s)", res.ID, res.Outcome, res.Reason)
			}
		}
		if ran != 2 || notStarted != 2 {
			t.Errorf("%d trials ran and %d were not started, want 2 and 2\n%s", ran, notStarted, r.Stdout)
		}
		if r.Code != 6 {
			t.Errorf("a run its budget stopped: exit %d, want 6 (stopped before all its trials ran)\n%s", r.Code, r.Stderr)
		}
		if !strings.Contains(r.Stdout, "budget: 2 trial(s) not started") {
			t.Errorf("chaos run does not say what the budget stopped:\n%s", r.Stdout)
		}
		if !strings.Contains(r.Stdout, "estimated cost: ") {
			t.Errorf("the plan has no cost line:\n%s", r.Stdout)
		}
	})
}
