package trial

import (
	"context"

	"github.com/crashwall/chaos/probes"
	"github.com/crashwall/chaos/proxies/llm"
	"github.com/crashwall/chaos/proxies/shim"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
)

// evidence is what one part of a trial, or another source its verdict reads (the spend,
// the operator's turns, the probes, the reviewer), hands the verdict. It is chosen from the spec, not from what runs, so that a worker with no live
// trial reads it from the record; where the part is live, it reads the part. Verify asks
// for it in stages, each an optional one-method interface found by type assertion:
//
//	ending  how the trial ended as the part saw it: a limit crossed, a failure that leaves no verdict
//	world   what the part adds to the world after the task's state checks: its checks, its damage
//	review  its word on a world the record cannot tell, once the checks, the damage and the fault had theirs
//	calls   what it counted of the trial's calls, their faults and their cost
//
// Within a stage the parts answer in evidenceFor's order, and a part's reason for no
// verdict stands over those of the parts after it.
type evidence interface {
	// part names the part the evidence comes from.
	part() string
}

type (
	endingEvidence interface {
		ending(v *verification)
	}
	worldEvidence interface {
		world(ctx context.Context, v *verification)
	}
	reviewEvidence interface {
		review(ctx context.Context, v *verification)
	}
	callsEvidence interface {
		calls(v *verification)
	}
)

// evidenceFor is the evidence of a trial of s (with task), in the order Verify asks it:
// the spend, the browser guard, the real world (probes and real servers), the script
// shim, the operator, the reviewer, the model proxy. lt is the live trial, nil on a
// worker that has none. A trial whose spec cannot be read (s nil) has its spend only.
func evidenceFor(s *spec.Spec, task spec.Task, lt *Live) []evidence {
	var model *llm.ModelProxy
	var scripts *shim.Shim
	var llmURL string
	if lt != nil {
		model, scripts, llmURL = lt.model, lt.shim, lt.llmURL
	}
	out := []evidence{costEvidence{model: model}}
	if s == nil {
		return out
	}
	if s.Browser != nil {
		out = append(out, browserEvidence{})
	}
	if len(s.Servers) > 0 || len(task.Probes) > 0 {
		out = append(out, realEvidence{})
	}
	if len(s.Scripts) > 0 {
		out = append(out, shimEvidence{live: scripts})
	}
	if s.Operator != nil {
		out = append(out, operatorEvidence{})
	}
	if s.Model.Reviewer != nil {
		out = append(out, reviewerEvidence{})
	}
	if s.Model.Upstream != "" {
		out = append(out, modelEvidence{live: model, url: llmURL})
	}
	return out
}

// ask hands every piece of evidence that has stage E to f, in order.
func ask[E any](ev []evidence, f func(E)) {
	for _, e := range ev {
		if e, ok := e.(E); ok {
			f(e)
		}
	}
}

// verification is one Verify in progress: what it read of the trial and the result it
// fills in, which the trial's evidence reads and adds to.
type verification struct {
	host *Host
	in   run.VerifyInput
	spec *spec.Spec // nil: the spec cannot be read
	task spec.Task
	// taskErr says the spec has no such task.
	taskErr error
	log     *record.Log // nil: no record, or none that can be read
	live    *Live       // nil: this worker does not serve the trial
	closing probes.Closing
	res     run.TrialResult
	// final is the world at the end (finalState), nil when it was not read.
	final map[string]any
	reach report.Reach
	// ranToItsEnd: the agent ended by itself (not a timeout, an abort or a failure of ours).
	ranToItsEnd bool
	// worldKnown: every check of the world could run.
	worldKnown bool
	// clean: no fault was armed; toolFired: the tool condition's fault fired.
	clean, toolFired bool
}

// noVerdict fails the trial for reason, unless it has failed already: the first reason
// stands.
func (v *verification) noVerdict(reason string) {
	if v.res.Outcome != run.OutcomeFailed {
		v.res.Outcome, v.res.Reason = run.OutcomeFailed, reason
	}
}

// worldUnknown says a check of the world could not run, and why ("": it could).
func (v *verification) worldUnknown(why string) {
	if why != "" {
		v.noVerdict(why)
		v.worldKnown = false
	}
}
