package report

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"

	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/redact"
	"github.com/crashwall/chaos/run"
)

//go:embed report.html.tmpl
var pageTemplate string

var page = template.Must(template.New("report").Parse(pageTemplate))

// Agreement is the judge's measured agreement with human labels for one agent profile
// and language, or nothing measured (then the report says so plainly).
type Agreement struct {
	Profile  string  `json:"profile"`
	Language string  `json:"language"`
	Measured bool    `json:"measured"`
	Kappa    float64 `json:"kappa"`
	Lo       float64 `json:"lo"`
	Hi       float64 `json:"hi"`
	N        int     `json:"n"`
	Source   string  `json:"source,omitempty"`
	// Matrix is the direction matrix: human label -> judge's label -> count.
	Matrix map[string]map[string]int `json:"matrix,omitempty"`
	// Reviewer names the reviewer model ("model:NAME") when this is the reviewer's
	// agreement with people (chaos judge agree --reviewer), not the claim judge's; its
	// labels are right, wrong and unsure, and Profile and Language are empty.
	Reviewer string `json:"reviewer,omitempty"`
}

// Page is everything one report shows.
type Page struct {
	Title     string      `json:"title"`
	Runs      []Manifest  `json:"runs"`
	Matrix    *Matrix     `json:"matrix"`
	Trials    []TrialView `json:"trials"`
	Agreement []Agreement `json:"agreement"`
	Limits    []Limit     `json:"limits"`
	Verdicts  []string    `json:"verdicts"`
	// Warnings are shown above everything else (Warnings: trials that never met the
	// wall, a clean condition that is not correct, nothing scored).
	Warnings []string `json:"warnings,omitempty"`
	// Costs are what each cell's model calls cost, then the whole ("run"); none when no
	// trial had a cost.
	Costs []CostView `json:"costs,omitempty"`
	// Gates are the run's gates judged on each cell and condition (one run's page only).
	Gates []GateResult `json:"gates,omitempty"`
}

// CostView is one line of the report's cost table.
type CostView struct {
	Cell string `json:"cell"`
	Line string `json:"line"`
}

// TrialView is a trial with its recorded calls, as the report shows it.
type TrialView struct {
	run.TrialResult
	Arm    string       `json:"arm"`
	Run    string       `json:"run"`
	Key    string       `json:"key"`
	Rows   []record.Row `json:"rows"`
	Damage string       `json:"damage,omitempty"`
}

// Limit is a group of trials left out of the rates, and why.
type Limit struct {
	Verdict string `json:"verdict"`
	Reason  string `json:"reason"`
	Count   int    `json:"count"`
}

// Build assembles the page for one or more runs. With one run the arms are its cells;
// with several, each run is an arm (e.g. two models side by side).
func Build(runs []*Run, agreement []Agreement) *Page {
	p := &Page{Agreement: agreement, Verdicts: Verdicts()}
	var entries []Entry
	var conditions []string
	for _, r := range runs {
		p.Runs = append(p.Runs, r.Manifest)
		for _, c := range r.Manifest.Conditions {
			if !contains(conditions, c) {
				conditions = append(conditions, c)
			}
		}
		for _, t := range r.Results {
			arm := t.Cell
			if len(runs) > 1 {
				arm = r.Manifest.RunID
				if t.Cell != "main" && t.Cell != "" {
					arm += " " + t.Cell
				}
			}
			tv := TrialView{TrialResult: t, Arm: arm, Run: r.Manifest.RunID, Key: r.Manifest.RunID + "|" + t.ID}
			tv.Rows, tv.Damage = r.Rows(t)
			p.Trials = append(p.Trials, tv)
			entries = append(entries, Entry{Trial: t, Arm: arm, Key: tv.Key})
		}
	}
	p.Matrix = NewMatrix(entries, conditions)
	for _, r := range runs {
		for _, w := range Warnings(r.Results) {
			if len(runs) > 1 {
				w = r.Manifest.RunID + ": " + w
			}
			p.Warnings = append(p.Warnings, w)
		}
	}
	limits := map[[2]string]int{}
	for _, t := range p.Trials {
		if !Scored(t.Verdict) {
			why := t.VerdictWhy
			if why == "" {
				why = t.Reason
			}
			if why == "" {
				why = t.Outcome
			}
			limits[[2]string{t.Verdict, why}]++
		}
	}
	for k, n := range limits {
		p.Limits = append(p.Limits, Limit{Verdict: k[0], Reason: k[1], Count: n})
	}
	sortLimits(p.Limits)
	var all []run.TrialResult
	for _, t := range p.Trials {
		t.TrialResult.Cell = t.Arm
		all = append(all, t.TrialResult)
	}
	if cells, total := Costs(all); cells != nil {
		for _, c := range cells {
			p.Costs = append(p.Costs, CostView{Cell: c.Cell, Line: c.CostLine()})
		}
		p.Costs = append(p.Costs, CostView{Cell: "all", Line: total.CostLine()})
	}
	if len(runs) == 1 {
		p.Gates = EvaluateGates(runs[0].Manifest.Gates, runs[0].Results, runs[0].Manifest.Outcomes)
	}
	p.Title = "chaos report"
	if len(runs) == 1 {
		p.Title = fmt.Sprintf("chaos report: %s, run %s", runs[0].Manifest.Spec.Name, runs[0].Manifest.RunID)
	}
	return p
}

func sortLimits(ls []Limit) {
	for i := 1; i < len(ls); i++ {
		for j := i; j > 0 && (ls[j].Verdict < ls[j-1].Verdict || ls[j].Verdict == ls[j-1].Verdict && ls[j].Reason < ls[j-1].Reason); j-- {
			ls[j], ls[j-1] = ls[j-1], ls[j]
		}
	}
}

// WriteHTML writes the page as one self-contained HTML file: no network, no external
// fonts or scripts; the data is embedded as JSON and drawn by a small inline script.
func WriteHTML(w io.Writer, p *Page) error {
	data, err := json.Marshal(p)
	if err != nil {
		return err
	}
	// encoding/json escapes <, > and & so the data cannot close its script element.
	return page.Execute(w, struct {
		Title string
		Data  template.JS
	}{p.Title, template.JS(data)})
}

// WriteFiles writes report.html and junit.xml into dir, atomically.
func WriteFiles(dir string, p *Page) error {
	if err := writeAtomic(filepath.Join(dir, "report.html"), func(w io.Writer) error { return WriteHTML(w, p) }); err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, "junit.xml"), func(w io.Writer) error { return WriteJUnit(w, p) })
}

type ioWriter = io.Writer

func writeAtomic(path string, fill func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	// Every secret value known is redacted: the report shows what agents said and did.
	w := redact.Known.NewWriter(f)
	if err := fill(w); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
