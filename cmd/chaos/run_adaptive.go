package main

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/client"

	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/workflows"
)

// defaultAdaptiveCap is the most replicates an adaptive run gives a cell and condition
// when --reps does not say.
const defaultAdaptiveCap = 40

// adaptiveRounds are the replicates a cell and condition has had after each round: 3,
// then about half as many again each round, up to cap.
func adaptiveRounds(cap int) []int {
	r := []int{min(3, cap)}
	for last := r[0]; last < cap; last = r[len(r)-1] {
		r = append(r, min(max(last+2, last*3/2), cap))
	}
	return r
}

// checkAdaptive refuses what an adaptive run cannot do yet, before anything runs.
func checkAdaptive(opts *RunOptions) error {
	if !opts.Adaptive {
		return nil
	}
	switch {
	case opts.Branch:
		return badInput(errors.New("--adaptive cannot be combined with --branch yet: run one or the other"))
	case opts.BudgetUSD > 0:
		return badInput(errors.New("--adaptive cannot be combined with --budget yet: cap it with --reps (the most replicates a condition gets) instead"))
	case opts.PairWith != "":
		return badInput(errors.New("--adaptive cannot be combined with --pair-with yet"))
	case opts.Width < 0 || opts.Width >= 1:
		return badInput(fmt.Errorf("--width must be a share between 0 and 1 (0.38 is 38 points), got %v", opts.Width))
	}
	return nil
}

// adaptiveKey names a cell and condition.
type adaptiveKey struct{ cell, cond string }

// runAdaptive runs plan (every replicate up to the cap) in rounds, one experiment
// workflow each, all writing into the one run folder: each round runs the next
// replicates of the cells and conditions whose question is still open, and Aggregate of
// the last round reads every trial run. A condition stops when its confidence sequence
// (report.Sequence) is as narrow as asked, when every silent-wrong gate is decided on it,
// or at the cap; a cell's clean condition runs as long as any condition of the cell does,
// so that every faulted trial has the clean trial of its seed to be paired with.
func runAdaptive(ctx, cctx context.Context, opts *RunOptions, c *conn, in run.ExperimentInput, gates []report.Gate, memo map[string]any) (run.ExperimentResult, error) {
	full := in.Plan.Trials
	rule := report.StopRule{Width: opts.Width, Cap: in.Plan.Replicates,
		Interval: func(k, n int) (float64, float64) { return report.Sequence(k, n, report.DefaultConfidence) }}
	if rule.Width == 0 {
		rule.Width = report.FixedWidth()
	}
	for _, g := range gates {
		if g.Outcome == report.SilentWrong {
			rule.Bars = append(rule.Bars, g.Bar)
		}
	}
	active := map[adaptiveKey]bool{}
	for _, t := range full {
		active[adaptiveKey{t.Cell, t.Condition}] = true
	}
	var done []spec.TrialPlan
	var res run.ExperimentResult
	prev := 0
	for round, reps := range adaptiveRounds(rule.Cap) {
		var next []spec.TrialPlan
		for _, t := range full {
			if t.Rep > prev && t.Rep <= reps && active[adaptiveKey{t.Cell, t.Condition}] {
				next = append(next, t)
			}
		}
		prev = reps
		if len(next) == 0 {
			break
		}
		fmt.Fprintf(opts.IO.Out, "adaptive round %d: %d trials (replicates up to %d of the conditions still open)\n", round+1, len(next), reps)
		rin := in
		rin.Plan.Trials = append(append([]spec.TrialPlan(nil), done...), next...)
		rin.Next, rin.Tally = len(done), run.Tally{Done: len(done)}
		wf, err := c.Client.ExecuteWorkflow(cctx, client.StartWorkflowOptions{ID: run.ExperimentWorkflowID(in.RunID), TaskQueue: c.TaskQueue, Memo: memo},
			workflows.ExperimentWorkflow, rin)
		if err != nil {
			return res, unexpected(c, fmt.Errorf("start round %d of the run: %w", round+1, err))
		}
		if res, err = followRun(ctx, cctx, opts.IO, c, wf.GetID(), len(rin.Plan.Trials)); err != nil {
			return res, err
		}
		done = rin.Plan.Trials
		if res.Aborted != "" || res.NeverArmed != "" {
			break
		}
		r, err := report.LoadRun(res.OutDir)
		if err != nil {
			return res, fmt.Errorf("read round %d's results: %w", round+1, err)
		}
		decideRound(r.Results, rule, active)
	}
	fixed := 0
	for _, t := range full {
		if t.Rep <= 10 {
			fixed++
		}
	}
	fmt.Fprintf(opts.IO.Out, "adaptive: %d trials run, where --reps 10 runs %d (each condition stopped when its %.0f%% confidence sequence was %.0f points wide or less, its gates decided, or at %d replicates)\n",
		len(done), fixed, 100*report.DefaultConfidence, 100*rule.Width, rule.Cap)
	return res, nil
}

// decideRound closes the cells and conditions whose question results answer; a clean
// condition stays open while any condition of its cell does.
func decideRound(results []run.TrialResult, rule report.StopRule, active map[adaptiveKey]bool) {
	type count struct{ k, n, trials int }
	counts := map[adaptiveKey]*count{}
	for _, t := range results {
		key := adaptiveKey{t.Cell, t.Condition}
		c := counts[key]
		if c == nil {
			c = &count{}
			counts[key] = c
		}
		c.trials++
		if report.Scored(t.Verdict) {
			c.n++
			if t.Verdict == report.SilentWrong {
				c.k++
			}
		}
	}
	open := map[string]bool{}
	for key, c := range counts {
		if !active[key] || key.cond == "clean" {
			continue
		}
		// The cap counts the trials run; the interval the scored ones.
		if stop, _ := rule.Stop(c.k, c.n); stop || c.trials >= rule.Cap {
			active[key] = false
			continue
		}
		open[key.cell] = true
	}
	for key, c := range counts {
		if key.cond != "clean" || !active[key] {
			continue
		}
		stop, _ := rule.Stop(c.k, c.n)
		active[key] = !(stop || c.trials >= rule.Cap) || open[key.cell]
	}
}
