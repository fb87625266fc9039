package activities

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/store"
	"github.com/crashwall/chaos/trial"
)

// storeTimeout bounds writing one run to the results database: a database that has gone
// away must not hold the end of a run for long.
const storeTimeout = 30 * time.Second

// storeRun copies a run that Aggregate has just written to its folder into the results
// database, when one is configured. The folder stays the record: a write that fails does
// not fail the run; storeRun returns one sentence saying what was not written and why
// ("" when all was, or when there is no database).
func (a *Activities) storeRun(ctx context.Context, in run.AggregateInput, m Manifest, results []run.TrialResult, sum run.Summary) string {
	if a.Results == nil {
		return ""
	}
	host, _ := os.Hostname()
	row := store.RunRow{
		RunID: in.RunID, SpecName: m.Spec.Name, SpecPath: m.Spec.Path, Plan: m.Plan,
		Conditions: m.Conditions, Cells: m.Cells, Trials: m.Trials, Finished: m.Finished,
		Started: m.Started, Ended: m.Ended, Aborted: m.Aborted, AgentCommand: m.AgentCommand,
		OutDir: in.OutDir, Host: host, ByVerdict: sum.ByVerdict, ByOutcome: sum.ByOutcome,
	}
	var calls []store.Call
	if a.StoreCalls {
		calls = store.RecordedCalls(in.OutDir, results)
	}
	ctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	if err := a.Results.WriteRun(ctx, row, results, calls); err != nil {
		msg := fmt.Sprintf("results database %s: could not write %s: %v; the run folder has all of it", a.Results.Where(), store.Describe(in.RunID, results, len(calls)), err)
		a.logger().Warn(msg, "run", in.RunID)
		return msg
	}
	a.logger().Info("run written to the results database", "run", in.RunID, "trials", len(results), "calls", len(calls), "database", a.Results.Where())
	return ""
}

// setSummarySection writes a section at the end of the run's summary.txt, headed
// "--- title", replacing a section of that title written before (a retried activity).
func setSummarySection(dir, title, body string) error {
	path := filepath.Join(dir, "summary.txt")
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	text := string(b)
	head := "\n--- " + title + "\n"
	if i := strings.Index(text, head); i >= 0 {
		rest := text[i+len(head):]
		end := strings.Index(rest, "\n--- ")
		if end < 0 {
			text = text[:i]
		} else {
			text = text[:i] + rest[end:]
		}
	}
	text = strings.TrimRight(text, "\n") + "\n" + head + strings.TrimRight(body, "\n") + "\n"
	return trial.WriteFileAtomic(path, []byte(text))
}
