package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/run"
)

// reviewedRun writes a run folder of four trials the reviewer was asked about, with the
// given answers, and one it was not; each trial's record is a swallowed write.
func reviewedRun(t *testing.T, answers []string) string {
	t.Helper()
	dir := t.TempDir()
	var results []run.TrialResult
	for i, a := range answers {
		id := fmt.Sprintf("main/phantom_success@update_ticket/%d", i+1)
		tdir := filepath.Join(dir, "trials", id)
		w, err := record.Open(filepath.Join(tdir, "record.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		w.Write(record.Row{Type: record.TypeSessionStart, Condition: "phantom_success@update_ticket", Writes: []string{"update_ticket"}})
		w.Write(record.Row{Type: record.TypeCall, Tool: "update_ticket", Args: json.RawMessage(`{"field":"priority","value":"urgent"}`), Reply: `{"status": "updated"}`, Hit: &record.Hit{Fired: true, Family: "phantom_success"}})
		w.Write(record.Row{Type: record.TypeCall, Tool: "update_ticket", Args: json.RawMessage(fmt.Sprintf(`{"field":"priority","value":"urgent","note":"try %d"}`, i)), Reply: `{"status": "updated"}`})
		w.Close(record.Row{Calls: 2, Fired: 1})
		results = append(results, run.TrialResult{ID: id, Cell: "main", Condition: "phantom_success@update_ticket", Rep: i + 1, Dir: tdir,
			Verdict: "silent_wrong", Closing: "Done.\nSTATUS: ok",
			Review: &run.Review{Question: "the write update_ticket at call 1 was swallowed and made again only with other arguments", Verdict: a, Reason: "secret-reason-" + a, By: "model:rev-1", Agreement: "not measured"}})
	}
	results = append(results, run.TrialResult{ID: "main/clean/1", Cell: "main", Condition: "clean", Rep: 1, Verdict: "correct", Closing: "Done."})
	b, _ := json.Marshal(results)
	os.WriteFile(filepath.Join(dir, "verdicts.json"), b, 0o644)
	os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(`{"run_id": "r1", "conditions": ["clean", "phantom_success@update_ticket"]}`), 0o644)
	return dir
}

// TestReviewerAgreement: chaos judge sample --reviewer writes the reviewer's cases blind
// (the calls, not its answers), agree computes the kappa of a person's labels with its
// answers and registers it under the reviewer's name, apart from the claim judge's; a
// label outside right, wrong, unsure is refused with where it is, nothing registered.
func TestReviewerAgreement(t *testing.T) {
	answers := []string{"wrong", "wrong", "right", "unsure"}
	dir := reviewedRun(t, answers)
	form := filepath.Join(t.TempDir(), "cases.csv")
	var out bytes.Buffer
	ios := &IOStreams{Out: &out, ErrOut: &out}
	if err := reviewerSample(&JudgeSampleOptions{IO: ios, Run: dir, Out: form, Seed: 1, Reviewer: true}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(form)
	if strings.Contains(string(b), "secret-reason") || strings.Contains(string(b), "silent_wrong") {
		t.Errorf("the form shows the reviewer's answer or the verdict:\n%s", b)
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil || len(recs) != 5 {
		t.Fatalf("the form has %d records (%v), want a header and 4 cases", len(recs), err)
	}
	var key judgeKey
	kb, _ := os.ReadFile(form + ".key.json")
	json.Unmarshal(kb, &key)
	if key.Reviewer != "model:rev-1" || len(key.Items) != 4 {
		t.Fatalf("key %+v", key)
	}
	// The person agrees on the two wrongs and the right, and says wrong where the
	// reviewer was unsure.
	byTrial := map[string]string{}
	for i, a := range answers {
		byTrial[fmt.Sprintf("main/phantom_success@update_ticket/%d", i+1)] = a
	}
	for _, r := range recs[1:] {
		if !strings.Contains(r[3], `"reached_the_world": false`) || !strings.Contains(r[3], `"note": "try`) {
			t.Errorf("case %s is not the case the reviewer read:\n%s", r[0], r[3])
		}
		r[1] = byTrial[key.Items[r[0]]]
		if r[1] == "unsure" {
			r[1] = "Wrong"
		}
	}
	write := func(recs [][]string) {
		var s bytes.Buffer
		csv.NewWriter(&s).WriteAll(recs)
		os.WriteFile(form, s.Bytes(), 0o644)
	}
	write(recs)
	reg := filepath.Join(t.TempDir(), "judges.json")
	out.Reset()
	if err := judgeAgree(&JudgeAgreeOptions{IO: ios, Form: form, Register: true, Registry: reg}); err != nil {
		t.Fatal(err)
	}
	// Observed 3/4; chance: person wrong 3/4 x reviewer wrong 2/4 + right 1/4 x 1/4 = 7/16.
	// kappa = (12/16 - 7/16) / (9/16) = 5/9 = 0.56.
	if !strings.Contains(out.String(), "reviewer model:rev-1 vs person on 4 cases: Cohen's kappa 0.56") {
		t.Errorf("agree printed:\n%s", out.String())
	}
	r, err := report.LoadRegistry(reg)
	if err != nil {
		t.Fatal(err)
	}
	a := r.LookupReviewer("model:rev-1")
	if !a.Measured || a.N != 4 || a.Kappa < 0.55 || a.Kappa > 0.56 || a.Matrix["wrong"]["unsure"] != 1 {
		t.Errorf("registered %+v", a)
	}
	if j := r.Lookup("", ""); j.Measured {
		t.Errorf("the reviewer's entry is taken for the claim judge's: %+v", j)
	}
	if txt := a.ReviewerText(); !strings.HasPrefix(txt, "Cohen's kappa 0.56 [") || !strings.HasSuffix(txt, "] on 4 labelled cases") {
		t.Errorf("the agreement reads %q", txt)
	}

	recs[2][1] = "probably fine"
	write(recs)
	os.Remove(reg)
	err = judgeAgree(&JudgeAgreeOptions{IO: ios, Form: form, Register: true, Registry: reg})
	if err == nil || !strings.Contains(err.Error(), `record 3 (line`) || !strings.Contains(err.Error(), `"probably fine" is not one of right, wrong, unsure`) {
		t.Errorf("a bad label: %v", err)
	}
	if _, err := os.Stat(reg); err == nil {
		t.Error("a refused form registered something")
	}
}

// TestReviewerSampleNoCases: a run whose reviewer was never asked has nothing to label.
func TestReviewerSampleNoCases(t *testing.T) {
	dir := reviewedRun(t, nil)
	err := reviewerSample(&JudgeSampleOptions{IO: &IOStreams{Out: &bytes.Buffer{}}, Run: dir, Out: filepath.Join(t.TempDir(), "f.csv"), Reviewer: true})
	if err == nil || !strings.Contains(err.Error(), "no case the reviewer was asked about") {
		t.Errorf("got %v", err)
	}
}
