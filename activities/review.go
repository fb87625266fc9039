package activities

import (
	"context"
	"fmt"
	"os"

	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/reviewer"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
)

// reviewerAgreement is what a review says of the reviewer's agreement with people:
// chaos judge sample/agree measures the claim judge only, so it is not measured yet.
const reviewerAgreement = "not measured"

// review asks the spec's reviewer model about a trial whose world the record cannot tell
// (reviewer.Needs), unless a check overrules the world verdict. Its right or wrong is the
// world verdict where the fault left success possible; unsure changes nothing. What it
// said goes into res.Review either way.
func review(ctx context.Context, s *spec.Spec, task spec.Task, condition string, log *record.Log, closing string, res *run.TrialResult) {
	rs := s.Model.Reviewer
	if rs == nil || res.Overrule != nil || log == nil {
		return
	}
	question := reviewer.Needs(log)
	if question == "" {
		return
	}
	r := reviewer.Reviewer{API: rs.API, Model: rs.Model}
	var err error
	if r.BaseURL, err = spec.ExpandSecrets(rs.BaseURL, os.LookupEnv); err == nil {
		r.APIKey, err = spec.ExpandSecrets(rs.APIKey, os.LookupEnv)
	}
	var a reviewer.Answer
	if err != nil {
		a = reviewer.Answer{Verdict: reviewer.Unsure, Reason: "the reviewer was not asked: " + err.Error(), By: rs.String()}
	} else {
		a = r.Review(ctx, reviewer.NewCase(task.Prompt, condition, question, log, closing))
	}
	res.Review = &run.Review{Question: question, Verdict: a.Verdict, Reason: a.Reason, By: a.By, Agreement: reviewerAgreement}
	if res.SuccessPossible || res.Fired == 0 {
		switch a.Verdict {
		case reviewer.Right:
			res.WorldOK = true
		case reviewer.Wrong:
			res.WorldOK = false
		}
	}
}

// reviewText says what the reviewer did to the verdict.
func reviewText(r *run.Review) string {
	return fmt.Sprintf("the reviewer (%s; its agreement with people: %s) said %s: %s", r.By, r.Agreement, r.Verdict, r.Reason)
}
