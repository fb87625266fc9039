package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/trial"
)

// Manifest is what manifest.json says about a run.
type Manifest struct {
	RunID string `json:"run_id"`
	Spec  struct {
		Name string `json:"name"`
		Path string `json:"path,omitempty"`
		// Identity is the spec's identity (spec.Identity: the spec without its model
		// table), which `chaos run --pair-with` compares.
		Identity string `json:"identity,omitempty"`
	} `json:"spec"`
	// PairedWith is the run folder whose seeds this run reused (--pair-with).
	PairedWith string `json:"paired_with,omitempty"`
	// Model is what was asked of the model proxy and what it was armed with.
	Model ModelManifest `json:"model"`
	// Outcomes names the outcomes the spec declares, which chaos diff compares.
	Outcomes report.OutcomeNames `json:"outcomes,omitzero"`
	// Plan is the plan in one line.
	Plan       string    `json:"plan"`
	Conditions []string  `json:"conditions"`
	Trials     int       `json:"trials"`
	Finished   int       `json:"finished"`
	Started    time.Time `json:"started"`
	Ended      time.Time `json:"ended"`
	// AgentCommand is the command template as given: tokens unfilled, and never the
	// values of agent.env, which may hold keys.
	AgentCommand string   `json:"agent_command,omitempty"`
	Aborted      string   `json:"aborted,omitempty"`
	Cells        []string `json:"cells,omitempty"`
	// Profile and Language say whose closing messages the judge read, so the report can
	// state the judge's measured agreement for them.
	Profile  string `json:"profile,omitempty"`
	Language string `json:"language,omitempty"`
	// Gates are the bars the run was asked to clear (chaos run --gate).
	Gates []report.Gate `json:"gates,omitempty"`
}

// ModelManifest is the model chaos of a run: what the spec asked and what was armed.
type ModelManifest struct {
	// Asked is the spec's model table as written (nil: the spec has none).
	Asked *spec.ModelSpec `json:"asked,omitempty"`
	// Armed says a model fault was injected; Fault, Rate and Steps are what it was
	// armed with.
	Armed bool     `json:"armed"`
	Fault string   `json:"fault"`
	Rate  float64  `json:"rate,omitempty"`
	Steps []string `json:"steps,omitempty"`
	// Upstream is where the proxy forwarded to, as the spec writes it.
	Upstream string `json:"upstream,omitempty"`
	// Proxies are the trials' {llm_url}s, by trial id: each trial has its own hub.
	Proxies map[string]string `json:"proxies,omitempty"`
	// Calls, Fired and Failed add up the trials' model calls, faulted calls and faults
	// that could not apply.
	Calls  int `json:"calls"`
	Fired  int `json:"fired"`
	Failed int `json:"failed"`
	// Note says in words what was armed, or why nothing was.
	Note string `json:"note"`
}

// modelManifest describes the model chaos of a run of s with these results.
func modelManifest(s *spec.Spec, results []run.TrialResult) ModelManifest {
	m := ModelManifest{Fault: spec.NoModelFault}
	if s == nil || s.Model.Upstream == "" {
		m.Note = "nothing armed: the spec has no model.upstream, so no model proxy ran"
		return m
	}
	asked := s.Model
	m.Asked, m.Upstream = &asked, s.Model.Upstream
	for _, r := range results {
		if r.Model == nil {
			continue
		}
		m.Calls += r.Model.Calls
		m.Fired += r.Model.Fired
		m.Failed += r.Model.Failed
		if r.Model.Proxy != "" {
			if m.Proxies == nil {
				m.Proxies = map[string]string{}
			}
			m.Proxies[r.ID] = r.Model.Proxy
		}
	}
	if !s.Model.Armed() {
		m.Note = "nothing armed: model.fault is none, so the proxy forwarded every call unchanged (a clean run)"
		return m
	}
	m.Armed, m.Fault, m.Rate, m.Steps = true, s.Model.FaultName(), s.Model.RateOrDefault(), s.Model.Steps
	where := "at every position"
	if len(m.Steps) > 0 {
		where = "at positions " + strings.Join(m.Steps, ", ")
	}
	m.Note = fmt.Sprintf("armed %s at rate %g %s: it fired on %d of %d model calls", m.Fault, m.Rate, where, m.Fired, m.Calls)
	if m.Failed > 0 {
		m.Note += fmt.Sprintf(" and could not apply on %d", m.Failed)
	}
	if m.Calls == 0 {
		m.Note += "; no model call reached the proxy"
	}
	return m
}

// Aggregate reads every planned trial's result from its folder and writes the run's files
// into the run folder: manifest.json, verdicts.json (every trial's result, by trial id)
// and summary.txt (per condition: outcomes, verdicts and how often the world ended
// right), and returns the counts.
func (a *Activities) Aggregate(ctx context.Context, in run.AggregateInput) (run.Summary, error) {
	if in.OutDir == "" {
		return run.Summary{}, badInput(fmt.Errorf("the run has no output folder (out_dir is empty)"))
	}
	// A heartbeat every few seconds, from the start to the end (the results database's
	// transaction included): a server or database restart loses this activity's
	// completion, and its heartbeat timeout, seconds, says so, not its start-to-close.
	stopBeat := keepAlive(ctx, a.beatEvery(), func() any { return "aggregate" })
	defer stopBeat()
	results, err := readResults(ctx, in)
	if err != nil {
		return run.Summary{}, err
	}
	sort.SliceStable(results, func(i, j int) bool { return results[i].ID < results[j].ID })

	m := Manifest{
		RunID: in.RunID, Plan: in.Plan.Summary(), Conditions: in.Plan.Conditions,
		Trials: len(in.Plan.Trials), Finished: len(results),
		Started: in.Started, Ended: time.Now().UTC(), Aborted: in.Aborted,
		AgentCommand: in.AgentCommand, Cells: in.Plan.Cells, Profile: "generic", Language: "en",
	}
	m.Spec.Name, m.Spec.Path = in.Spec.Name, in.Spec.Path
	for _, text := range in.Gates {
		if g, err := report.ParseGate(text); err == nil { // checked when the run was planned
			m.Gates = append(m.Gates, g)
		}
	}
	m.PairedWith = in.Plan.PairedWith
	s, err := spec.Parse(specName(in.Spec), in.Spec.YAML)
	if err != nil {
		s = nil
	} else {
		trial.LearnSecrets(s)
	}
	if s != nil && in.Spec.Profile != "" {
		s.Agent.Profile = in.Spec.Profile
	}
	m.Model = modelManifest(s, results)
	if s != nil {
		m.Spec.Identity = s.Identity()
		m.Outcomes = report.OutcomeNamesOf(s.Outcomes)
		if m.Spec.Name == "" {
			m.Spec.Name = s.Name
		}
		if m.AgentCommand == "" {
			m.AgentCommand = s.Agent.Command
		}
		if s.Agent.Profile != "" {
			m.Profile = s.Agent.Profile
		}
	}
	sum := run.Summary{Trials: len(results), ByVerdict: map[string]int{}, ByOutcome: map[string]int{}, Cells: map[string]run.CellCount{}}
	for _, r := range results {
		sum.ByOutcome[r.Outcome]++
		// An unjudged trial (no judge yet) has no verdict to count.
		if r.Verdict != "" {
			sum.ByVerdict[r.Verdict]++
		}
		c := sum.Cells[r.Cell]
		if report.Scored(r.Verdict) {
			c.Scored++
			if r.Verdict == report.SilentWrong {
				c.SilentWrong++
			}
		}
		sum.Cells[r.Cell] = c
		if r.Model != nil {
			sum.ModelTrials++
			sum.ModelCalls += r.Model.Calls
		}
	}

	if cells, total := report.Costs(results); cells != nil {
		sum.SpentUSD, sum.Cost = total.Spent, total.CostLine()
	}
	sum.Warnings = report.Warnings(results)
	sum.CleanNotCorrect = report.CleanNotCorrect(results)
	sum.Unscorable = report.Unscorable(results)

	if results == nil {
		results = []run.TrialResult{}
	}
	for _, f := range []struct {
		name string
		v    any
	}{{"manifest.json", m}, {"verdicts.json", results}} {
		b, err := json.MarshalIndent(f.v, "", "  ")
		if err != nil {
			return sum, fmt.Errorf("encode %s: %w", f.name, err)
		}
		if err := trial.WriteFileAtomic(filepath.Join(in.OutDir, f.name), append(b, '\n')); err != nil {
			return sum, err
		}
	}
	if err := trial.WriteFileAtomic(filepath.Join(in.OutDir, "summary.txt"), summaryTable(in, results, m)); err != nil {
		return sum, err
	}
	if err := a.writeReport(in.OutDir); err != nil {
		return sum, fmt.Errorf("write the report: %w", err)
	}
	// The folder is complete; the results database gets a copy, and the summary says
	// what did not reach it.
	if sum.ResultsDB = a.storeRun(ctx, in, m, results, sum); sum.ResultsDB != "" {
		if err := setSummarySection(in.OutDir, "results database", sum.ResultsDB); err != nil {
			return sum, err
		}
	}
	a.logger().Info("run aggregated", "run", in.RunID, "trials", sum.Trials, "out_dir", in.OutDir)
	return sum, nil
}

// readResults reads every planned trial's result.json. A trial without one was not
// started after an abort, or ended leaving no result (its workflow records those with
// RecordResult, so this is a worker that lost the file): either way it is listed, once.
func readResults(ctx context.Context, in run.AggregateInput) ([]run.TrialResult, error) {
	results := make([]run.TrialResult, 0, len(in.Plan.Trials))
	for i, t := range in.Plan.Trials {
		if i%500 == 0 {
			heartbeat(ctx, i)
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		r := run.TrialResult{ID: t.ID, Cell: t.Cell, Condition: t.Condition, Rep: t.Rep, Seed: t.Seed}
		dir, err := trial.Dir(run.TrialInput{OutDir: in.OutDir, Trial: t})
		if err != nil {
			return nil, badInput(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "result.json"))
		switch {
		case err == nil:
			if err := json.Unmarshal(b, &r); err != nil {
				return nil, fmt.Errorf("trial %s: read its result.json: %w", t.ID, err)
			}
		case !errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("trial %s: %w", t.ID, err)
		case in.Aborted != "":
			r.Outcome, r.Reason = run.OutcomeAborted, "not started: "+in.Aborted
		default:
			r.Outcome, r.Reason = run.OutcomeFailed, "the trial left no result.json in "+dir
		}
		results = append(results, r)
	}
	return results, nil
}

// RecordResult writes a result the experiment workflow made itself (a trial that
// failed or was aborted before its Verify wrote one) to the trial's result.json, where
// Aggregate reads every result from.
func (a *Activities) RecordResult(ctx context.Context, in run.RecordResultInput) error {
	dir, err := trial.Dir(run.TrialInput{OutDir: in.OutDir, Trial: spec.TrialPlan{ID: in.Result.ID}})
	if err != nil {
		return badInput(err)
	}
	r := in.Result
	r.Dir = dir
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode the result of trial %s: %w", r.ID, err)
	}
	return trial.WriteFileAtomic(filepath.Join(dir, "result.json"), append(b, '\n'))
}

func specName(ref run.SpecRef) string {
	if ref.Path != "" {
		return ref.Path
	}
	return ref.Name
}

var outcomes = []string{run.OutcomeCompleted, run.OutcomeAborted, run.OutcomeTimedOut, run.OutcomeFailed}

// summaryTable is one row per condition, in plan order:
//
//	condition  trials  world ok  completed  aborted  timed_out  failed  <verdicts...>
func summaryTable(in run.AggregateInput, results []run.TrialResult, m Manifest) []byte {
	conds := slices.Clone(in.Plan.Conditions)
	var verdicts []string
	unjudged := false
	for _, r := range results {
		if !slices.Contains(conds, r.Condition) {
			conds = append(conds, r.Condition)
		}
		if r.Verdict == "" {
			unjudged = true
		} else if !slices.Contains(verdicts, r.Verdict) {
			verdicts = append(verdicts, r.Verdict)
		}
	}
	sort.Strings(verdicts)
	if unjudged {
		verdicts = append(verdicts, "unjudged")
	}

	var b bytes.Buffer
	fmt.Fprintf(&b, "run %s: %s\n", in.RunID, in.Plan.Summary())
	if in.Aborted != "" {
		fmt.Fprintf(&b, "aborted: %s\n", in.Aborted)
	}
	// What must be known before any number below is read comes first.
	for _, w := range report.Warnings(results) {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	head := append([]string{"condition", "trials", "world ok"}, outcomes...)
	fmt.Fprintln(tw, strings.Join(append(head, verdicts...), "\t"))
	for _, c := range conds {
		var n, ok int
		counts := map[string]int{}
		for _, r := range results {
			if r.Condition != c {
				continue
			}
			n++
			if r.WorldOK {
				ok++
			}
			counts[r.Outcome]++
			if r.Verdict == "" {
				counts["unjudged"]++
			} else {
				counts[r.Verdict]++
			}
		}
		row := []string{c, fmt.Sprint(n), fmt.Sprintf("%d/%d", ok, n)}
		for _, k := range append(slices.Clone(outcomes), verdicts...) {
			row = append(row, fmt.Sprint(counts[k]))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
	if lines := report.ReviewedLines(results, conds); len(lines) > 0 {
		// The rates of these rows rest in part on the reviewer's word: say how far.
		b.WriteString("\nworld verdicts the reviewer decided (where the record could not tell):\n")
		for _, l := range lines {
			fmt.Fprintf(&b, "  %s\n", l)
		}
	}
	writeCosts(&b, results)
	writeGates(&b, m.Gates, m.Outcomes, results)
	return b.Bytes()
}

// writeGates adds to summary.txt each gate's calls (chaos run --gate).
func writeGates(b *bytes.Buffer, gates []report.Gate, declared report.OutcomeNames, results []run.TrialResult) {
	if len(gates) == 0 {
		return
	}
	fmt.Fprintf(b, "\ngates (%.0f%% anytime-valid confidence sequence: a gate fails only when it lies wholly past the bar)\n", 100*report.DefaultConfidence)
	for _, r := range report.EvaluateGates(gates, results, declared) {
		fmt.Fprintf(b, "  %s: %s\n", r.Gate.Text, r)
	}
}

// writeReport writes report.html and junit.xml from the run folder just written, with
// the judge's measured agreement from the registry (or the report's plain warning).
func (a *Activities) writeReport(dir string) error {
	r, err := report.LoadRun(dir)
	if err != nil {
		return err
	}
	reg := &report.Registry{}
	if a.JudgeRegistry != "" {
		if reg, err = report.LoadRegistry(a.JudgeRegistry); err != nil {
			a.logger().Warn("the judge registry cannot be read; the report says the judge was not measured", "path", a.JudgeRegistry, "error", err)
			reg = &report.Registry{}
		}
	}
	runs := []*report.Run{r}
	return report.WriteFiles(dir, report.Build(runs, report.AgreementsFor(runs, reg)))
}

// writeCosts adds to summary.txt what each cell and the run cost.
func writeCosts(b *bytes.Buffer, results []run.TrialResult) {
	cells, total := report.Costs(results)
	if cells == nil {
		return
	}
	b.WriteString("\ncost\n")
	for _, c := range cells {
		fmt.Fprintf(b, "  %s: %s\n", c.Cell, c.CostLine())
	}
	fmt.Fprintf(b, "  run: %s\n", total.CostLine())
}
