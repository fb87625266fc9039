package activities

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/trial"
)

func TestAggregate(t *testing.T) {
	a, env := newActivities(t)
	yaml := exampleYAML(t, "  timeout: 60s\n", "  timeout: 60s\n  env: {API_KEY: sk-secret}\n")
	s, err := spec.Parse("support-ticket.yaml", yaml)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := spec.NewPlan(s, []string{"clean", "phantom_success@update_ticket"}, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	result := func(i int, outcome string, worldOK bool) run.TrialResult {
		p := plan.Trials[i]
		return run.TrialResult{ID: p.ID, Cell: p.Cell, Condition: p.Condition, Rep: p.Rep, Outcome: outcome, WorldOK: worldOK}
	}
	in := run.AggregateInput{
		RunID: "r1", OutDir: filepath.Join(t.TempDir(), "out"),
		Spec: run.SpecRef{Name: s.Name, Path: "examples/support-ticket.yaml", YAML: yaml},
		Plan: *plan, Started: time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC),
	}
	// Four of the eight trials left a result in their folders (out of order, as trials
	// finish); the other four left none.
	done := []run.TrialResult{
		result(3, run.OutcomeCompleted, false), result(0, run.OutcomeCompleted, true),
		result(2, run.OutcomeTimedOut, false), result(1, run.OutcomeCompleted, true),
	}
	done[1].Verdict = "correct"
	for _, r := range done {
		if err := a.RecordResult(t.Context(), run.RecordResultInput{OutDir: in.OutDir, Result: r}); err != nil {
			t.Fatal(err)
		}
	}
	sum := must[run.Summary](t, env, a.Aggregate, in)
	if sum.Trials != 8 || sum.ByOutcome[run.OutcomeCompleted] != 3 || sum.ByOutcome[run.OutcomeTimedOut] != 1 || sum.ByOutcome[run.OutcomeFailed] != 4 ||
		sum.ByVerdict["correct"] != 1 || len(sum.ByVerdict) != 1 {
		t.Errorf("summary %+v", sum)
	}

	var m Manifest
	b, err := os.ReadFile(filepath.Join(in.OutDir, "manifest.json"))
	if err != nil || json.Unmarshal(b, &m) != nil {
		t.Fatalf("manifest.json: %v\n%s", err, b)
	}
	// Two cells (agent: blind, verifying) x two conditions x two replicates, every one listed.
	const wantPlan = "plan 8 trials of support-ticket: 2 cells x 2 conditions x 2 replicates, concurrency 1"
	if m.RunID != "r1" || m.Spec.Name != "support-ticket" || m.Spec.Path != "examples/support-ticket.yaml" || m.Spec.Identity != s.Identity() ||
		m.Trials != 8 || m.Finished != 8 || !slices.Equal(m.Conditions, []string{"clean", "phantom_success@update_ticket"}) ||
		!m.Started.Equal(in.Started) || m.Ended.IsZero() || m.Plan != wantPlan || m.AgentCommand != s.Agent.Command ||
		!strings.HasPrefix(m.AgentCommand, "{chaos} agent scripted --style {agent} ") ||
		!slices.Equal(m.Cells, []string{"agent=blind", "agent=verifying"}) || m.Profile != "scripted" || m.Language != "en" || m.Aborted != "" {
		t.Errorf("manifest %+v", m)
	}
	if strings.Contains(string(b), "sk-secret") {
		t.Errorf("manifest.json holds a value of agent.env:\n%s", b)
	}

	var verdicts []run.TrialResult
	b, err = os.ReadFile(filepath.Join(in.OutDir, "verdicts.json"))
	if err != nil || json.Unmarshal(b, &verdicts) != nil || len(verdicts) != 8 {
		t.Fatalf("verdicts.json: %v\n%s", err, b)
	}
	for i := 1; i < len(verdicts); i++ {
		if verdicts[i-1].ID >= verdicts[i].ID {
			t.Errorf("verdicts.json is not sorted by trial id: %s before %s", verdicts[i-1].ID, verdicts[i].ID)
		}
	}

	b, err = os.ReadFile(filepath.Join(in.OutDir, "summary.txt"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, want := range []string{"run r1: " + wantPlan + "\n", "condition", "world ok", "correct", "unjudged"} {
		if !strings.Contains(text, want) {
			t.Errorf("summary.txt lacks %q:\n%s", want, text)
		}
	}
	// condition trials world-ok completed aborted timed_out failed correct unjudged
	// (the four trials without a result are failed: they left none)
	for _, want := range [][]string{
		{"clean", "4", "2/4", "2", "0", "0", "2", "1", "3"},
		{"phantom_success@update_ticket", "4", "0/4", "1", "0", "1", "2", "0", "4"},
	} {
		found := false
		for _, line := range strings.Split(text, "\n") {
			if strings.Join(strings.Fields(line), " ") == strings.Join(want, " ") {
				found = true
			}
		}
		if !found {
			t.Errorf("summary.txt has no row %v:\n%s", want, text)
		}
	}

	// The report is written beside them: report.html and junit.xml (report.WriteFiles).
	b, err = os.ReadFile(filepath.Join(in.OutDir, "report.html"))
	if err != nil || !strings.Contains(string(b), "<html") || !strings.Contains(string(b), "support-ticket") {
		t.Errorf("report.html: %v\n%.500s", err, b)
	}
	var junit struct {
		XMLName xml.Name `xml:"testsuites"`
		Suites  []struct {
			Name string `xml:"name,attr"`
		} `xml:"testsuite"`
	}
	b, err = os.ReadFile(filepath.Join(in.OutDir, "junit.xml"))
	if err != nil || xml.Unmarshal(b, &junit) != nil || len(junit.Suites) == 0 {
		t.Errorf("junit.xml: %v\n%s", err, b)
	}

	entries, err := os.ReadDir(in.OutDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"junit.xml", "manifest.json", "report.html", "summary.txt", "trials", "verdicts.json"}; !slices.Equal(names, want) {
		t.Errorf("the run folder holds %q; want %q and no temporary files", names, want)
	}
}

// With results on disk, Aggregate reads each planned trial's result.json (Verify's, or
// RecordResult's for a result the workflow made) and lists a trial without one once:
// aborted when the run was, else failed.
func TestAggregateReadsResultsFromDisk(t *testing.T) {
	a, env := newActivities(t)
	yaml := exampleYAML(t, "  timeout: 60s\n", "  timeout: 60s\n")
	s, err := spec.Parse("support-ticket.yaml", yaml)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := spec.NewPlan(s, []string{"clean"}, 2, 1) // two cells x two replicates
	if err != nil {
		t.Fatal(err)
	}
	for _, aborted := range []string{"", "interrupted by the user"} {
		t.Run("aborted="+aborted, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			p0, p1 := plan.Trials[0], plan.Trials[1]
			// Trial 0 as Verify leaves it; trial 1 as the workflow records a failure.
			verified := run.TrialResult{ID: p0.ID, Cell: p0.Cell, Condition: p0.Condition, Rep: p0.Rep, Outcome: run.OutcomeCompleted, Verdict: "silent_wrong", WorldOK: false}
			b, _ := json.Marshal(verified)
			if err := trial.WriteFileAtomic(filepath.Join(out, "trials", filepath.FromSlash(p0.ID), "result.json"), b); err != nil {
				t.Fatal(err)
			}
			failed := run.TrialResult{ID: p1.ID, Cell: p1.Cell, Condition: p1.Condition, Rep: p1.Rep, Outcome: run.OutcomeFailed, Reason: "trial workflow: boom"}
			if _, err := env.ExecuteActivity(a.RecordResult, run.RecordResultInput{OutDir: out, Result: failed}); err != nil {
				t.Fatal(err)
			}

			in := run.AggregateInput{RunID: "r1", OutDir: out, Spec: run.SpecRef{Name: s.Name, YAML: yaml}, Plan: *plan, Aborted: aborted}
			sum := must[run.Summary](t, env, a.Aggregate, in)
			var verdicts []run.TrialResult
			b, err := os.ReadFile(filepath.Join(out, "verdicts.json"))
			if err != nil || json.Unmarshal(b, &verdicts) != nil {
				t.Fatalf("verdicts.json: %v\n%s", err, b)
			}
			if len(verdicts) != len(plan.Trials) {
				t.Fatalf("verdicts.json lists %d trials, want every planned one (%d)", len(verdicts), len(plan.Trials))
			}
			byID := map[string]run.TrialResult{}
			for _, r := range verdicts {
				byID[r.ID] = r
			}
			if r := byID[p0.ID]; r.Verdict != "silent_wrong" {
				t.Errorf("trial %s: %+v, want Verify's result", p0.ID, r)
			}
			if r := byID[p1.ID]; r.Outcome != run.OutcomeFailed || r.Reason != failed.Reason || r.Dir == "" {
				t.Errorf("trial %s: %+v, want the recorded failure with its folder", p1.ID, r)
			}
			wantOutcome, wantReason := run.OutcomeFailed, "left no result.json"
			if aborted != "" {
				wantOutcome, wantReason = run.OutcomeAborted, "not started: "+aborted
			}
			for _, p := range plan.Trials[2:] {
				if r := byID[p.ID]; r.Outcome != wantOutcome || !strings.Contains(r.Reason, wantReason) {
					t.Errorf("trial %s without a result.json: outcome %q (%s), want %s (%s)", p.ID, r.Outcome, r.Reason, wantOutcome, wantReason)
				}
			}
			if sum.Trials != len(plan.Trials) || sum.Cells[p0.Cell] != (run.CellCount{Scored: 1, SilentWrong: 1}) {
				t.Errorf("summary %+v", sum)
			}
		})
	}
}

// TestAggregateHeartbeats: Aggregate heartbeats every few seconds for as long as it runs,
// so a server or database restart that loses its completion costs its heartbeat timeout
// (the workflow gives it 30 s), not its five-minute start-to-close. Here it is held on a
// trial's result.json (a named pipe no one writes yet) until it has heartbeaten three
// times, then let go; it ends with that result.
func TestAggregateHeartbeats(t *testing.T) {
	a, env := newActivities(t)
	a.heartbeatEvery = 10 * time.Millisecond
	// Every heartbeat Aggregate makes (activity.RecordHeartbeat), as the SDK is handed it.
	beats := make(chan struct{}, 100)
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{&heartbeatCalls{beats: beats}}})
	yaml := exampleYAML(t, "  timeout: 60s\n", "  timeout: 60s\n")
	s, err := spec.Parse("support-ticket.yaml", yaml)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := spec.NewPlan(s, []string{"clean"}, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	p0 := plan.Trials[0]
	dir := filepath.Join(out, "trials", filepath.FromSlash(p0.ID))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "result.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	done := make(chan run.Summary, 1)
	go func() {
		done <- must[run.Summary](t, env, a.Aggregate, run.AggregateInput{RunID: "r1", OutDir: out, Spec: run.SpecRef{Name: s.Name, YAML: yaml}, Plan: *plan})
	}()
	for range 3 {
		<-beats
	}
	select {
	case sum := <-done:
		t.Fatalf("Aggregate ended before it read the result: %+v", sum)
	default:
	}
	b, _ := json.Marshal(run.TrialResult{ID: p0.ID, Cell: p0.Cell, Condition: p0.Condition, Rep: p0.Rep, Outcome: run.OutcomeCompleted, Verdict: "correct"})
	if err := os.WriteFile(fifo, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if sum := <-done; sum.ByVerdict["correct"] != 1 || sum.Trials != len(plan.Trials) {
		t.Errorf("summary %+v; want the trial's verdict from the result it was held on", sum)
	}
}

// heartbeatCalls is a worker interceptor that sends on beats (when there is room) at each
// heartbeat an activity records with "aggregate" as its details.
type heartbeatCalls struct {
	interceptor.WorkerInterceptorBase
	beats chan struct{}
}

func (h *heartbeatCalls) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &heartbeatCallsIn{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}, beats: h.beats}
}

type heartbeatCallsIn struct {
	interceptor.ActivityInboundInterceptorBase
	beats chan struct{}
}

func (i *heartbeatCallsIn) Init(outbound interceptor.ActivityOutboundInterceptor) error {
	return i.Next.Init(&heartbeatCallsOut{ActivityOutboundInterceptorBase: interceptor.ActivityOutboundInterceptorBase{Next: outbound}, beats: i.beats})
}

type heartbeatCallsOut struct {
	interceptor.ActivityOutboundInterceptorBase
	beats chan struct{}
}

func (o *heartbeatCallsOut) RecordHeartbeat(ctx context.Context, details ...interface{}) {
	if len(details) == 1 && details[0] == "aggregate" {
		select {
		case o.beats <- struct{}{}:
		default:
		}
	}
	o.Next.RecordHeartbeat(ctx, details...)
}

// TestModelManifest: what manifest.json says was asked and armed.
func TestModelManifest(t *testing.T) {
	parse := func(model string) *spec.Spec {
		s, err := spec.Parse("s.yaml", exampleYAML(t, "faults: [all]\n", "faults: [all]\n"+model))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	results := []run.TrialResult{
		{ID: "a/clean/1", Model: &run.ModelResult{Proxy: "http://127.0.0.1:1/llm", Calls: 3, Fired: 1}},
		{ID: "a/clean/2", Model: &run.ModelResult{Proxy: "http://127.0.0.1:2/llm", Calls: 2, Failed: 1}},
		{ID: "a/clean/3"},
	}
	m := modelManifest(parse("model: {upstream: \"${X}/v1\", fault: llm_error_single, rate: 0.5, steps: [choose]}\n"), results)
	if !m.Armed || m.Fault != "llm_error_single" || m.Rate != 0.5 || len(m.Steps) != 1 || m.Upstream != "${X}/v1" || m.Asked == nil ||
		m.Calls != 5 || m.Fired != 1 || m.Failed != 1 || len(m.Proxies) != 2 ||
		m.Note != "armed llm_error_single at rate 0.5 at positions choose: it fired on 1 of 5 model calls and could not apply on 1" {
		t.Errorf("armed: %+v", m)
	}
	m = modelManifest(parse("model: {upstream: \"http://x/v1\"}\n"), results)
	if m.Armed || m.Fault != "none" || m.Asked == nil || !strings.HasPrefix(m.Note, "nothing armed: model.fault is none") {
		t.Errorf("clean: %+v", m)
	}
	m = modelManifest(parse(""), nil)
	if m.Armed || m.Asked != nil || m.Note != "nothing armed: the spec has no model.upstream, so no model proxy ran" {
		t.Errorf("no model table: %+v", m)
	}
}
