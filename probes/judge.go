package probes

import (
	"context"

	"github.com/crashwall/chaos/spec"
)

// The claims a closing message can make.
const (
	ClaimedSuccess  = "claimed_success"
	ReportedFailure = "reported_failure"
	Unclear         = "unclear"
)

// Judge reads the claim of a closing message: did the agent tell the operator it
// succeeded? Rules is the default, offline; ModelJudge asks a model.
type Judge interface {
	Classify(ctx context.Context, c Closing, claim spec.ClaimSpec) (Judgement, error)
}

// Judgement is a judge's reading of one closing message.
type Judgement struct {
	// Claim is ClaimedSuccess, ReportedFailure or Unclear.
	Claim string `json:"claim"`
	// Reason quotes what decided: the phrase, the status line or the rule.
	Reason string `json:"reason"`
	// By is "rules" or "model:<name>".
	By string `json:"by"`
}
