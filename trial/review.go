package trial

import (
	"context"
	"fmt"
	"os"

	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/reviewer"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
)

// reviewerAgreement is the reviewer's measured agreement with people as the judge
// registry holds it when the trial is judged (chaos judge agree --reviewer --register),
// or "not measured".
func (h *Host) reviewerAgreement(by string) string {
	if h.JudgeRegistry == "" {
		return "not measured"
	}
	reg, err := report.LoadRegistry(h.JudgeRegistry)
	if err != nil {
		h.logger().Warn("the judge registry cannot be read; the reviewer's agreement is not measured", "path", h.JudgeRegistry, "error", err)
		return "not measured"
	}
	return reg.LookupReviewer(by).ReviewerText()
}

// reviewerEvidence is the spec's reviewer model's word on a world the record cannot tell.
type reviewerEvidence struct{}

func (reviewerEvidence) part() string { return "reviewer" }

// review asks the spec's reviewer model about a trial whose world the record cannot tell
// (reviewer.Needs), unless a check overrules the world verdict. Its right or wrong is the
// world verdict where the fault left success possible; unsure changes nothing. What it
// said goes into the result's Review either way.
func (reviewerEvidence) review(ctx context.Context, v *verification) {
	s, log, res := v.spec, v.log, &v.res
	rs := s.Model.Reviewer
	if rs == nil || res.Overrule != nil || log == nil {
		return
	}
	question := reviewer.Needs(withWrites(s, log))
	if question == "" {
		return
	}
	r := reviewer.Reviewer{API: rs.API, Model: rs.Model}
	var err error
	if r.BaseURL, err = spec.ExpandSecrets(rs.BaseURL, os.LookupEnv); err == nil {
		r.APIKey, err = spec.ExpandSecrets(rs.APIKey, os.LookupEnv)
	}
	var ans reviewer.Answer
	if err != nil {
		ans = reviewer.Answer{Verdict: reviewer.Unsure, Reason: "the reviewer was not asked: " + err.Error(), By: rs.String()}
	} else {
		ans = r.Review(ctx, reviewer.NewCase(v.task.Prompt, res.Condition, question, log, v.closing.Text))
	}
	res.Review = &run.Review{Question: question, Verdict: ans.Verdict, Reason: ans.Reason, By: ans.By, Agreement: v.host.reviewerAgreement(ans.By)}
	if res.SuccessPossible || res.Fired == 0 {
		switch ans.Verdict {
		case reviewer.Right:
			res.WorldOK, res.Review.Decided = true, true
		case reviewer.Wrong:
			res.WorldOK, res.Review.Decided = false, true
		}
	}
}

// reviewText says what the reviewer did to the verdict.
func reviewText(r *run.Review) string {
	return fmt.Sprintf("the reviewer (%s; its agreement with people: %s) said %s: %s", r.By, r.Agreement, r.Verdict, r.Reason)
}

// withWrites is the log with its session_start naming the tools that write. The hub names
// them only in front of real servers (a simulated world's state says what was written),
// but a swallowed write made again with other arguments is as much beyond the record in a
// simulated world: its state checks see the keys they check, not what else the new
// arguments did. The log itself is left as it is.
func withWrites(s *spec.Spec, log *record.Log) *record.Log {
	if log.Start == nil || len(log.Start.Writes) > 0 {
		return log
	}
	start := *log.Start
	for _, t := range s.Tools {
		if t.Effect == spec.EffectWrite {
			start.Writes = append(start.Writes, t.Name)
		}
	}
	out := *log
	out.Start = &start
	return &out
}
