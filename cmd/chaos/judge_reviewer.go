package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/reviewer"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
)

// The labels a person gives a reviewer's case: whether the world the agent left is the
// one the task asked for, as the reviewer was asked.
var reviewerLabels = map[string]string{"right": reviewer.Right, "wrong": reviewer.Wrong, "unsure": reviewer.Unsure}

// reviewerSample writes a blind form of the cases the reviewer model was asked about:
// each the very case it read (the task, the condition, the question, every call with its
// reply and whether it reached the world, the closing message), never its answer or the
// trial's verdict. The key beside it names the trials and the reviewer.
func reviewerSample(opts *JudgeSampleOptions) error {
	if opts.Out == "" {
		return badInput(errors.New("say where to write the form: --out FORM.csv"))
	}
	r, err := report.LoadRun(opts.Run)
	if err != nil {
		return badInput(err)
	}
	var trials []run.TrialResult
	by := ""
	for _, t := range r.Results {
		if t.Review == nil {
			continue
		}
		if by != "" && t.Review.By != by {
			return badInput(fmt.Errorf("%s has cases of two reviewers (%s and %s): one form measures one", opts.Run, by, t.Review.By))
		}
		by = t.Review.By
		trials = append(trials, t)
	}
	if len(trials) == 0 {
		return badInput(fmt.Errorf("%s has no case the reviewer was asked about (no trial's result.json has a review)", opts.Run))
	}
	task := taskPrompt(r)
	n, err := writeForm(opts, judgeKey{Reviewer: by}, trials, "c",
		[]string{"id", "label (right / wrong / unsure: is the world the one the task asked for?)", "why the record cannot tell", "the case (JSON, as the reviewer read it)"},
		func(t run.TrialResult) (string, []string, error) {
			c, err := reviewCase(r, t, task)
			return t.ID, []string{"", t.Review.Question, c}, err
		})
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.Out, "form: %s (%d cases of the reviewer %s)\nkey:  %s (keep it; do not show it to the labeller)\n", opts.Out, n, by, opts.Out+".key.json")
	return nil
}

// reviewCase is the case of a trial as the reviewer read it, indented JSON.
func reviewCase(r *report.Run, t run.TrialResult, task string) (string, error) {
	dir := t.Dir
	if dir == "" {
		dir = filepath.Join(r.Dir, "trials", t.ID)
	}
	log, err := record.ReadFile(filepath.Join(dir, "record.jsonl"))
	if log == nil {
		return "", badInput(fmt.Errorf("trial %s: its record cannot be read: %w", t.ID, err))
	}
	b, err := json.MarshalIndent(reviewer.NewCase(task, t.Condition, t.Review.Question, log, t.Closing), "", " ")
	return string(b), err
}

// taskPrompt is the run's task as the reviewer read it: the prompt of the spec's one
// task (the run folder keeps the spec), or "" when it cannot be told.
func taskPrompt(r *report.Run) string {
	for _, p := range []string{filepath.Join(r.Dir, "spec.yaml"), r.Manifest.Spec.Path} {
		if p == "" {
			continue
		}
		if s, err := spec.Load(p); err == nil && len(s.Tasks) == 1 {
			return s.Tasks[0].Prompt
		}
	}
	return ""
}

// reviewerAgree computes the reviewer's agreement with a person's labels of its cases,
// and registers it under the reviewer's name.
func reviewerAgree(opts *JudgeAgreeOptions, key judgeKey) error {
	r, err := report.LoadRun(key.Run)
	if err != nil {
		return badInput(err)
	}
	answers := map[string]string{}
	for _, t := range r.Results {
		if t.Review != nil && t.Review.By == key.Reviewer {
			answers[t.ID] = t.Review.Verdict
		}
	}
	human, machine, err := pairLabels(opts, key, reviewerLabels, "right, wrong, unsure", func(tid string) (string, string) {
		a, ok := answers[tid]
		if !ok {
			return "", fmt.Sprintf("trial %s has no answer of the reviewer %s in %s", tid, key.Reviewer, key.Run)
		}
		return a, ""
	})
	if err != nil {
		return err
	}
	cats := []string{reviewer.Right, reviewer.Wrong, reviewer.Unsure}
	return measureAgreement(opts, human, machine, cats, fmt.Sprintf("reviewer %s vs person on %d cases", key.Reviewer, len(human)), "reviewer",
		report.Agreement{Reviewer: key.Reviewer})
}
