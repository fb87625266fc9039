package workflows

// The types moved to package run: activities import run, workflows import activities.
// IMPORTANT for activities code: import "github.com/crashwall/chaos/run", never this package
// (workflows imports activities; importing workflows from activities is an import cycle).

import "github.com/crashwall/chaos/run"

// Aliases, so workflow code reads naturally.
type (
	SpecRef           = run.SpecRef
	ExperimentInput   = run.ExperimentInput
	ExperimentResult  = run.ExperimentResult
	Progress          = run.Progress
	TrialInput        = run.TrialInput
	Workspace         = run.Workspace
	HubInfo           = run.HubInfo
	SetUp             = run.SetUp
	AgentInput        = run.AgentInput
	AgentResult       = run.AgentResult
	WatchInput        = run.WatchInput
	WatchResult       = run.WatchResult
	VerifyInput       = run.VerifyInput
	TeardownInput     = run.TeardownInput
	CheckResult       = run.CheckResult
	TrialResult       = run.TrialResult
	Summary           = run.Summary
	AggregateInput    = run.AggregateInput
	Tally             = run.Tally
	RecordResultInput = run.RecordResultInput
	TrialBatchInput   = run.TrialBatchInput
	TrialBatchResult  = run.TrialBatchResult
	BatchReport       = run.BatchReport
)

const (
	TaskQueue           = run.TaskQueue
	SignalAbort         = run.SignalAbort
	SignalBatchReport   = run.SignalBatchReport
	SignalBatchSlots    = run.SignalBatchSlots
	QueryProgress       = run.QueryProgress
	DefaultHistoryLimit = run.DefaultHistoryLimit
	OutcomeCompleted    = run.OutcomeCompleted
	OutcomeAborted      = run.OutcomeAborted
	OutcomeTimedOut     = run.OutcomeTimedOut
	OutcomeFailed       = run.OutcomeFailed
)

var (
	ExperimentWorkflowID = run.ExperimentWorkflowID
	TrialAbortSignal     = run.TrialAbortSignal
)
