// Package run is the vocabulary of a run: what the client passes to the workflows, what the
// workflows pass to the activities and get back, and the names of signals, queries and
// workflow ids. It sits below both, so activities need not import workflows.
package run

import (
	"strconv"
	"time"

	"github.com/crashwall/chaos/cost"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/spec"
)

// Names of signals, queries, the task queue and workflow ids, in one place.
const (
	TaskQueue     = "chaos"
	SignalAbort   = "abort"
	QueryProgress = "progress"
)

// EmbeddedTaskQueue is the task queue of a run that chaos run runs with its own embedded
// worker: only that worker (or chaos resume RUN's) takes its trials, never another run's.
func EmbeddedTaskQueue(runID string) string { return "chaos-run-" + runID }

// TrialTaskQueue is the task queue a run's trials (RunTrial) wait on, beside queue, the
// one its workflows and other activities use. A worker polls it with exactly as many
// activity slots as trials it runs at once (--max-trials), so a trial that finds every
// slot taken waits in the queue, unstarted: no retry is spent on it and no history grows.
func TrialTaskQueue(queue string) string { return queue + "-trials" }

// MemoSpec is the memo field of a run's workflow that names its spec, for chaos runs.
const MemoSpec = "spec"

// ExperimentWorkflowID is the workflow id of a run.
func ExperimentWorkflowID(runID string) string { return "chaos-run-" + runID }

// TrialBatchWorkflowID is the workflow id of the TrialBatchWorkflow that runs a run's
// trials from the first'th (in the order they start) on: unique per run and batch, so a
// replayed experiment never starts a batch twice.
func TrialBatchWorkflowID(runID string, first int) string {
	return "chaos-run-" + runID + "/trials-" + strconv.Itoa(first)
}

// SpecRef carries the spec to the workers: its text, so a worker on another host needs
// no copy of the file, and where it came from.
type SpecRef struct {
	Name string `json:"name"`
	Path string `json:"path"`
	YAML []byte `json:"yaml"`
	// Profile, when set, takes the place of the spec's agent.profile (chaos run
	// --profile), as an agent command after -- takes the place of agent.command.
	Profile string `json:"profile,omitempty"`
}

// ExperimentInput is the input of ExperimentWorkflow: the whole plan, decided by the
// client. Next and Results carry progress over a continue-as-new.
type ExperimentInput struct {
	RunID string    `json:"run_id"`
	Spec  SpecRef   `json:"spec"`
	Plan  spec.Plan `json:"plan"`
	// OutDir is the run folder on the worker host.
	OutDir string `json:"out_dir"`
	// AgentCommand, when set, takes the place of the spec's agent command.
	AgentCommand string `json:"agent_command,omitempty"`
	// Started is when the run was submitted.
	Started time.Time `json:"started"`
	// AgentTimeout is the spec's agent.timeout (0: the default); the workflow sizes the
	// agent activity's timeouts from it.
	AgentTimeout time.Duration `json:"agent_timeout,omitempty"`
	// HeartbeatTimeout is how long a trial's worker may go unheard (its session's and its
	// agent activity's heartbeat timeout) before the trial is run again elsewhere
	// (0: derived from the agent's timeout, see HeartbeatTimeoutFor).
	HeartbeatTimeout time.Duration `json:"heartbeat_timeout,omitempty"`

	// Next is the position (in the order trials start: plan order, or clean trials first
	// under --branch) of the first trial not yet handed to a batch.
	Next int `json:"next,omitempty"`
	// Tally counts the trials finished before a continue-as-new. Their results are in
	// their trial folders (result.json), not in the workflow: a payload holding every
	// result outgrows Temporal's 2 MB limit at about 1,900 trials.
	Tally Tally `json:"tally,omitzero"`
	// Aborted carries an abort across a continue-as-new.
	Aborted string `json:"aborted,omitempty"`
	// HistoryLimit is how many trials a single workflow run hands to its batches before it
	// continues as new (0: DefaultHistoryLimit).
	HistoryLimit int `json:"history_limit,omitempty"`
	// BatchSize is the most trials one TrialBatchWorkflow runs (0: DefaultBatchSize).
	BatchSize int `json:"batch_size,omitempty"`
	// Shape is the workflows' shape the run was started with (Shape); 0 in older runs.
	Shape int `json:"shape,omitempty"`
	// BudgetUSD is the most the run may spend on model calls (chaos run --budget; 0: no
	// budget): no trial starts once what was spent plus what the running trials and the
	// new one are expected to spend would exceed it.
	BudgetUSD float64 `json:"budget_usd,omitempty"`
	// ExpectedTrialUSD is what a trial is expected to cost before any has finished (an
	// earlier run's mean; 0: unknown); after, the finished trials' mean is used.
	ExpectedTrialUSD float64 `json:"expected_trial_usd,omitempty"`
	// Gates are chaos run --gate's bars, for Aggregate (AggregateInput.Gates).
	Gates []string `json:"gates,omitempty"`
}

// Shape is the shape of the workflows this binary runs: what ExperimentWorkflow and
// TrialBatchWorkflow do, in which order. A run carries the shape it was started with
// (ExperimentInput.Shape; 0 in runs from before shapes were numbered); chaos resume refuses
// a run of another shape, whose history these workflows cannot replay. Bump it with any
// change that alters a running workflow's commands.
const Shape = 1

// DefaultBatchSize is how many trials one TrialBatchWorkflow runs at most: its history
// (about seven events a trial) stays a few thousand events and well under a megabyte,
// and it never has more than that many activities pending at once (one workflow with
// ~1,000 pending stalled: each update sorts the timers of all of them).
const DefaultBatchSize = 200

// DefaultHistoryLimit is how many trials one run of ExperimentWorkflow hands to its
// batches before it continues as new: a batch costs the experiment's own history a few
// dozen events, so 20,000 trials (100 batches) are a few thousand.
const DefaultHistoryLimit = 20000

// HistoryLimitFor is the history limit of a run of concurrency trials at once: at least
// DefaultHistoryLimit, and ten rounds of the concurrency (a run of the chain waits for
// its batches to end before the next starts), at most 50,000 trials (250 batches).
func HistoryLimitFor(concurrency int) int {
	return min(max(DefaultHistoryLimit, 10*concurrency), 50_000)
}

// Tally counts finished trials, by verdict where there is one, else by outcome.
type Tally struct {
	Done int            `json:"done"`
	By   map[string]int `json:"by,omitempty"`
	// SpentUSD sums the money of the finished trials (TrialCost.Spent), for --budget.
	SpentUSD float64 `json:"spent_usd,omitempty"`
}

// Add counts r.
func (t *Tally) Add(r TrialResult) {
	if t.By == nil {
		t.By = map[string]int{}
	}
	key := r.Outcome
	if r.Verdict != "" {
		key = r.Verdict
	}
	t.By[key]++
	t.Done++
	if r.Cost != nil {
		t.SpentUSD = cost.Round(t.SpentUSD + r.Cost.Spent())
	}
}

// Merge adds the counts of o.
func (t *Tally) Merge(o Tally) {
	if t.By == nil {
		t.By = map[string]int{}
	}
	for k, n := range o.By {
		t.By[k] += n
	}
	t.Done += o.Done
	t.SpentUSD = cost.Round(t.SpentUSD + o.SpentUSD)
}

// ExperimentResult is what a run ends with.
type ExperimentResult struct {
	RunID   string  `json:"run_id"`
	OutDir  string  `json:"out_dir"`
	Summary Summary `json:"summary"`
	Aborted string  `json:"aborted,omitempty"`
	// NeverArmed says why the run stopped early: a trial proved that its model fault can
	// never be armed (ModelResult.NeverCalled). chaos run exits 3 with it.
	NeverArmed string `json:"never_armed,omitempty"`
	// Budget says how many trials were not started because the run's budget (--budget)
	// would have been exceeded, and why ("": none).
	Budget string `json:"budget,omitempty"`
}

// Progress is the answer to the progress query.
type Progress struct {
	Total     int            `json:"total"`
	Done      int            `json:"done"`
	Running   int            `json:"running"`
	ByOutcome map[string]int `json:"by_outcome"`
	Aborted   string         `json:"aborted,omitempty"`
}

// TrialInput is the input of every trial activity.
type TrialInput struct {
	RunID        string         `json:"run_id"`
	OutDir       string         `json:"out_dir"`
	Spec         SpecRef        `json:"spec"`
	Trial        spec.TrialPlan `json:"trial"`
	AgentCommand string         `json:"agent_command,omitempty"`
	AgentTimeout time.Duration  `json:"agent_timeout,omitempty"`
	// HeartbeatTimeout: as in ExperimentInput.
	HeartbeatTimeout time.Duration `json:"heartbeat_timeout,omitempty"`
	// BranchFrom (chaos run --branch, a fault trial) is the ID of the clean trial whose
	// twin state the trial starts from (trial/branchrun.go reads it from the run folder).
	BranchFrom string `json:"branch_from,omitempty"`
	// AbortSignal is the signal that aborts this trial: TrialAbortSignal of its id, sent to
	// the TrialBatchWorkflow that runs it (its watcher sends it there).
	AbortSignal string `json:"abort_signal,omitempty"`
}

// TrialAbortSignal is the signal that aborts one trial, sent to the TrialBatchWorkflow
// that runs it (SignalAbort to the experiment aborts the whole run).
func TrialAbortSignal(trialID string) string { return SignalAbort + "/" + trialID }

// AbortSignalOf is the signal that aborts the trial in.
func AbortSignalOf(in TrialInput) string {
	if in.AbortSignal != "" {
		return in.AbortSignal
	}
	return SignalAbort
}

// DefaultAgentTimeout is a trial's agent.timeout when the spec gives none.
const DefaultAgentTimeout = 5 * time.Minute

// HeartbeatTimeoutFor is the heartbeat timeout of a trial whose agent may run for
// agentTimeout, when the run sets none: a fifth of the agent's time, between one and five
// minutes. A worker starved of CPU (load 30 on 2 cores) goes quiet for tens of seconds
// and is not lost; a worker that really died costs at most this long before its trial is
// run again, which is small beside the trial it retries.
func HeartbeatTimeoutFor(agentTimeout time.Duration) time.Duration {
	return min(max(agentTimeout/5, time.Minute), 5*time.Minute)
}

// Key identifies the trial across activities on one worker.
func (in TrialInput) Key() string { return in.RunID + "/" + in.Trial.ID }

// Workspace is where a trial runs and where its evidence goes.
type Workspace struct {
	// Dir is the agent's working directory ({sandbox}).
	Dir string `json:"dir"`
	// TrialDir is the trial's folder in the run folder (record, stdout, stderr, result).
	TrialDir string `json:"trial_dir"`
	// SpecPath is the spec as written into the trial folder ({spec}).
	SpecPath string `json:"spec_path"`
	// Git says the workspace is a git checkout, whose changes are kept as a diff.
	Git bool `json:"git,omitempty"`
	// Base is the commit the git checkout was made at (its hash), kept outside the
	// sandbox: the agent may move every ref in it.
	Base string `json:"base,omitempty"`
}

// HubInfo is the running hub of a trial and the filled-in tokens of the agent command.
type HubInfo struct {
	URL    string            `json:"url"`
	Tokens map[string]string `json:"tokens"`
	// Command is the agent command with the tokens filled in.
	Command string `json:"command"`
}

// SetUp is what SetUpTrial made: the workspace and, unless HubError says why not, the
// running hub.
type SetUp struct {
	Workspace Workspace `json:"workspace"`
	Hub       HubInfo   `json:"hub"`
	// HubError is why the hub did not start (after the activity's retries, or at once for
	// bad input): the trial fails with it, its workspace verified and torn down.
	HubError string `json:"hub_error,omitempty"`
	// Queue is the task queue of the worker that set the trial up (its hub lives there):
	// the trial's later steps run on it. Empty from a worker without one.
	Queue string `json:"queue,omitempty"`
	// Steps are the set-up's steps: worktree (the sandbox) and proxy (the hub).
	Steps []Step `json:"steps,omitempty"`
}

// AgentInput is the input of RunAgent.
type AgentInput struct {
	Trial     TrialInput `json:"trial"`
	Workspace Workspace  `json:"workspace"`
	Hub       HubInfo    `json:"hub"`
	// Finish: RunWatchedAgent verifies and tears the trial down itself when its agent
	// ended on its own (WatchedAgentResult.Result).
	Finish bool `json:"finish,omitempty"`
	// Steps are the trial's steps before the agent (SetUp.Steps), for its result.
	Steps []Step `json:"steps,omitempty"`
}

// WatchedAgentResult is RunWatchedAgent's: how the agent ended, the abort its watcher
// asked for, and the verified trial when the activity finished it (nil: the workflow
// runs FinishTrial).
type WatchedAgentResult struct {
	Agent  AgentResult  `json:"agent"`
	Abort  string       `json:"abort,omitempty"`
	Result *TrialResult `json:"result,omitempty"`
	// SetUp is what RunTrial set up (nil from RunWatchedAgent): where the workflow
	// finishes the trial when the activity did not.
	SetUp *SetUp `json:"setup,omitempty"`
}

// AgentResult is how the agent process ended.
type AgentResult struct {
	ExitCode int           `json:"exit_code"`
	TimedOut bool          `json:"timed_out,omitempty"`
	Duration time.Duration `json:"duration"`
	// Error is set when the command could not be started.
	Error string `json:"error,omitempty"`
	// Output says what of stdout and stderr was dropped (nil: nothing).
	Output *AgentOutput `json:"output,omitempty"`
}

// AgentExited is the close reason of a trial whose agent ended by itself.
const AgentExited = "agent exited"

// Ending is how the trial of an agent that ended with r closes: the record's close
// reason, and the failure that makes the trial failed ("" when none). It is the one
// mapping from an agent's ending to a close reason, for the workflow and for RunTrial.
func (r AgentResult) Ending() (closeReason, failure string) {
	switch {
	case r.Error != "":
		return "agent did not start", "the agent command could not start: " + r.Error
	case r.TimedOut:
		return "agent timed out", ""
	}
	return AgentExited, ""
}

// AgentOutput is what a trial did not keep of the agent's output: each stream keeps its
// last Cap bytes.
type AgentOutput struct {
	Cap           int64 `json:"cap"`
	StdoutDropped int64 `json:"stdout_dropped"`
	StderrDropped int64 `json:"stderr_dropped"`
}

// WatchInput is the input of WatchEvents.
type WatchInput struct {
	Trial TrialInput `json:"trial"`
}

// WatchResult says whether the watcher asked for an abort, and why.
type WatchResult struct {
	Abort string `json:"abort,omitempty"`
}

// VerifyInput is the input of Verify.
type VerifyInput struct {
	Trial     TrialInput   `json:"trial"`
	Workspace Workspace    `json:"workspace"`
	Agent     *AgentResult `json:"agent,omitempty"`
	// Aborted is the reason the trial was aborted, if it was.
	Aborted string `json:"aborted,omitempty"`
	// Failure is an infrastructure failure that ended the trial (no verdict).
	Failure string `json:"failure,omitempty"`
	// CloseReason, when set, has Verify close the trial's record (session_end, with the
	// final state) once it has read the world, with this reason: the record is complete
	// even if the worker dies before Teardown. Teardown closes it otherwise.
	CloseReason string `json:"close_reason,omitempty"`
	// Steps are the trial's steps so far (worktree, proxy, agent), for its result.
	Steps []Step `json:"steps,omitempty"`
}

// TeardownInput is the input of Teardown.
type TeardownInput struct {
	Trial     TrialInput `json:"trial"`
	Workspace Workspace  `json:"workspace"`
	// Reason is how the session ended, for the record's session_end row.
	Reason string `json:"reason"`
}

// Outcomes of a trial.
const (
	OutcomeCompleted = "completed" // the agent exited on its own
	OutcomeAborted   = "aborted"   // a limit or a person stopped it
	OutcomeTimedOut  = "timed_out" // the agent ran past its timeout
	OutcomeFailed    = "failed"    // the harness could not run the trial
)

// CheckResult is one state check on the final world.
type CheckResult struct {
	Check string `json:"check"`
	OK    bool   `json:"ok"`
	Got   any    `json:"got,omitempty"`
}

// TrialResult is what a trial ends with; it is also written to the trial folder.
type TrialResult struct {
	ID        string `json:"id"`
	Cell      string `json:"cell"`
	Condition string `json:"condition"`
	Rep       int    `json:"rep"`
	Seed      int64  `json:"seed"`
	Outcome   string `json:"outcome"`
	// Reason explains an abort, a timeout or a failure.
	Reason   string `json:"reason,omitempty"`
	ExitCode int    `json:"exit_code"`
	// WorldOK says every state check passed.
	WorldOK bool          `json:"world_ok"`
	Checks  []CheckResult `json:"checks,omitempty"`
	// Damage is what the agent did besides the task (trial/verify.go, trial/shim.go): writes outside
	// its sandbox, writes that landed in another account, a write that must happen once
	// performed twice. Any makes the world wrong.
	Damage []string `json:"damage,omitempty"`
	// Operator are the scripted operator's turns (spec operator:), from the record.
	Operator []record.Operator `json:"operator,omitempty"`
	// Units are the task's units judged one by one (spec units:), when it has them; the
	// trial's verdict is then their roll-up.
	Units []UnitResult `json:"units,omitempty"`
	// Branch (chaos run --branch, a fault trial): "from TRIAL at row N" when it started
	// from the clean trial's twin, else why it ran whole.
	Branch string `json:"branch,omitempty"`
	// Claim is the judge's reading of the closing message: claimed, not_claimed, unclear.
	Claim   string `json:"claim,omitempty"`
	Closing string `json:"closing,omitempty"`
	// ClaimReason is the judge's one-line reason; ClaimBy names the judge ("rules", "model:NAME").
	ClaimReason string `json:"claim_reason,omitempty"`
	ClaimBy     string `json:"claim_by,omitempty"`
	// Profile is how the closing message was read (generic, claude-code, codex, goose, scripted).
	Profile string `json:"profile,omitempty"`
	// Infra is an infrastructure failure the profile spotted (no verdict).
	Infra string `json:"infra,omitempty"`
	// VerdictWhy says why the verdict is what it is.
	VerdictWhy string `json:"verdict_why,omitempty"`
	// Unreached is why the trial has no verdict when the agent never met the wall: a
	// code (report.UnreachedNoToolCall, ...) and, in UnreachedWhy, what to change.
	Unreached    string `json:"unreached,omitempty"`
	UnreachedWhy string `json:"unreached_why,omitempty"`
	// Verdict is world x claim (see package report).
	Verdict         string `json:"verdict"`
	SuccessPossible bool   `json:"success_possible"`
	Calls           int    `json:"calls"`
	Fired           int    `json:"fired"`
	// FaultsFired names the faults that fired in the trial: the tool condition's id and/or
	// "model:" and the model fault's name. A trial filed under a tool condition in which
	// only the model fault fired says so here (and in VerdictWhy).
	FaultsFired []string      `json:"faults_fired,omitempty"`
	Duration    time.Duration `json:"duration"`
	Dir         string        `json:"dir"`
	// Output says what of the agent's stdout and stderr was dropped (nil: nothing).
	Output *AgentOutput `json:"output,omitempty"`
	// Steps are the trial's steps as the design names them (worktree, proxy, agent,
	// verify, teardown) and how long each took: result.json has those before verify, the
	// result in the workflow's history (RunTrial's, FinishTrial's) all of them.
	Steps []Step `json:"steps,omitempty"`
	// Model is what the model proxy saw (nil: the spec has no model.upstream).
	Model *ModelResult `json:"model,omitempty"`
	// Cost is what the trial's model calls used and cost (nil: no model proxy, and the
	// agent reported no cost of its own); see cost.go.
	Cost *TrialCost `json:"cost,omitempty"`
	// Outcomes says, per outcome the spec declares, whether it held (nil when the spec
	// declares none or the trial has no verdict).
	Outcomes map[string]bool `json:"outcomes,omitempty"`
	// Overrule is the word of a check that overrules the world verdict (a command probe
	// with overrules: true, chaos skill test --check); nil when the spec has none.
	Overrule *Overrule `json:"overrule,omitempty"`
	// Review is the reviewer model's answer where the record could not tell whether the
	// world is right (nil: no review was needed or the spec names no reviewer).
	Review *Review `json:"review,omitempty"`
}

// Step is one step of a trial and how long it took.
type Step struct {
	Name     string        `json:"name"`
	Duration time.Duration `json:"duration"`
}

// Review is what the reviewer model (model.reviewer) said of a trial.
type Review struct {
	// Question is why the record could not tell.
	Question string `json:"question"`
	// Verdict is right, wrong or unsure; Reason its reason; By "model:NAME".
	Verdict string `json:"verdict"`
	Reason  string `json:"reason"`
	By      string `json:"by"`
	// Decided is true when the answer set the world verdict (right or wrong where the
	// fault left success possible): the trial's verdict rests on the reviewer's word.
	Decided bool `json:"decided,omitempty"`
	// Agreement is the reviewer's measured agreement with people when the trial ran
	// (chaos judge agree --reviewer --register), or "not measured".
	Agreement string `json:"agreement"`
}

// Overrule is what an overruling check said of the world, and what the other checks
// said: WorldOK follows the check, both ways.
type Overrule struct {
	Check string `json:"check"`
	// WorldOK is the check's word; Others what the world verdict would have been without
	// it: the other checks' (OtherChecks of them), or right when there were none.
	WorldOK     bool  `json:"world_ok"`
	Others      *bool `json:"others,omitempty"`
	OtherChecks int   `json:"other_checks"`
	// Overruled says the check and the others disagreed, so the verdict is the check's.
	Overruled bool   `json:"overruled"`
	Detail    string `json:"detail,omitempty"`
}

// ModelResult is a trial's model proxy: where it was, what it was armed with, and its
// counts of model calls.
type ModelResult struct {
	// Proxy is the trial's {llm_url}.
	Proxy string `json:"proxy"`
	// Fault is the armed model fault ("none" for a clean run).
	Fault string `json:"fault"`
	// Calls counts the model calls that reached the proxy.
	Calls int `json:"calls"`
	// Fired counts the calls whose response the fault mutated.
	Fired int `json:"fired"`
	// Failed counts the calls on which the fault fired and could not apply.
	Failed int `json:"failed,omitempty"`
	// NeverCalled: a model fault was armed and the agent ran to its own end without one
	// model call reaching the proxy. It proves the fault can never be armed in this run
	// (the agent is not pointed at {llm_url}), so the run stops.
	NeverCalled bool `json:"never_called,omitempty"`
	// Lacked is the part of a turn the fault needed and the turn at LackedAt did not have
	// (faults.ModelFault.Needs): the fault failed the episode there, not the agent.
	Lacked   string `json:"lacked,omitempty"`
	LackedAt string `json:"lacked_at,omitempty"`
	// TextAt and ToolCallsAt are the positions whose turns, as the model answered them
	// (no fault), had text and had tool calls: where a fault that needs one would apply.
	TextAt      []string `json:"text_at,omitempty"`
	ToolCallsAt []string `json:"tool_calls_at,omitempty"`
}

// Summary counts a run's trials by verdict and outcome.
type Summary struct {
	Trials    int            `json:"trials"`
	ByVerdict map[string]int `json:"by_verdict"`
	ByOutcome map[string]int `json:"by_outcome"`
	// ResultsDB says what could not be written to the results database, and why ("": all
	// was, or none is configured).
	ResultsDB string `json:"results_db,omitempty"`
	// Cells counts, per cell, the scored trials and the silent wrong ones among them:
	// the headline chaos run prints.
	Cells map[string]CellCount `json:"cells,omitempty"`
	// ModelTrials counts the trials that had a model proxy, ModelCalls the calls that
	// reached one.
	ModelTrials int `json:"model_trials,omitempty"`
	ModelCalls  int `json:"model_calls,omitempty"`
	// SpentUSD is what the run's model calls cost, Cost the same in a line with its
	// tokens (report.CellCost.CostLine); "" when no trial had a cost.
	SpentUSD float64 `json:"spent_usd,omitempty"`
	Cost     string  `json:"cost,omitempty"`
	// Warnings are what must be read before any rate (report.Warnings); CleanNotCorrect
	// lists the cells whose clean condition is not correct in every scored trial
	// (report.CleanNotCorrect); Unscorable says no trial could be scored. Aggregate
	// fills them from every trial's result, which the client never holds.
	Warnings        []string `json:"warnings,omitempty"`
	CleanNotCorrect []string `json:"clean_not_correct,omitempty"`
	Unscorable      bool     `json:"unscorable,omitempty"`
}

// CellCount is a cell's headline: silent wrong trials over scored ones.
type CellCount struct {
	Scored      int `json:"scored"`
	SilentWrong int `json:"silent_wrong"`
}

// RecordResultInput is the input of RecordResult: a result the experiment workflow made
// itself (a trial that failed or was aborted before Verify wrote one).
type RecordResultInput struct {
	OutDir string      `json:"out_dir"`
	Result TrialResult `json:"result"`
}

// AggregateInput is the input of Aggregate.
type AggregateInput struct {
	RunID   string    `json:"run_id"`
	OutDir  string    `json:"out_dir"`
	Spec    SpecRef   `json:"spec"`
	Plan    spec.Plan `json:"plan"`
	Started time.Time `json:"started"`
	// Every planned trial's result is read from its folder (trials/<id>/result.json); a
	// trial without one was not started (after an abort) or left no result.
	Aborted      string `json:"aborted,omitempty"`
	AgentCommand string `json:"agent_command,omitempty"`
	// Gates are chaos run --gate's bars, written into the run folder's manifest, summary,
	// report and JUnit.
	Gates []string `json:"gates,omitempty"`
}

// UnitResult is one unit of a task (a record, a file) judged on its own: the world from
// the state checks whose key names it, the claim from its line in the closing message.
type UnitResult struct {
	Unit    string        `json:"unit"`
	WorldOK bool          `json:"world_ok"`
	Checks  []CheckResult `json:"checks,omitempty"`
	Claim   string        `json:"claim"`
	Verdict string        `json:"verdict"`
	Damage  []string      `json:"damage,omitempty"`
	// Branched: a unit done before a --branch fault trial started (the clean trial's
	// work, seeded into its twin), judged from that state.
	Branched bool `json:"branched,omitempty"`
}

// SignalBatchReport is the signal a TrialBatchWorkflow sends its experiment: a
// BatchReport, now and then, not once a trial (TrialBatchWorkflow says when).
const SignalBatchReport = "batch-report"

// SignalBatchSlots is the signal an experiment sends a batch that has trials waiting: n
// more of the run's slots (an int) to run them in.
const SignalBatchSlots = "batch-slots"

// TrialBatchInput is the input of TrialBatchWorkflow: a run's trials at positions
// [First, End) of the order they start in, Concurrency of them at a time. The spec's text
// is here once for the batch; each trial's activities get it without (TrialInput), and a
// worker reads it from the batch's start (activities specOf).
type TrialBatchInput struct {
	RunID            string        `json:"run_id"`
	OutDir           string        `json:"out_dir"`
	Spec             SpecRef       `json:"spec"`
	Plan             spec.Plan     `json:"plan"`
	AgentCommand     string        `json:"agent_command,omitempty"`
	AgentTimeout     time.Duration `json:"agent_timeout,omitempty"`
	HeartbeatTimeout time.Duration `json:"heartbeat_timeout,omitempty"`
	First            int           `json:"first"`
	End              int           `json:"end"`
	Concurrency      int           `json:"concurrency"`
	// BudgetUSD and ExpectedTrialUSD are the run's (chaos run --budget); Before counts
	// the run's trials finished before the batch started (their spending), After the
	// trials planned after it: a batch that stops at the budget says how many of the
	// run's trials were not started.
	BudgetUSD        float64 `json:"budget_usd,omitempty"`
	ExpectedTrialUSD float64 `json:"expected_trial_usd,omitempty"`
	Before           Tally   `json:"before,omitzero"`
	After            int     `json:"after,omitempty"`
}

// TrialInput is the input of the trial t's activities: the run's settings, the spec
// without its text (a worker has it from the batch: every trial's input stays the same
// size whatever the spec's), and the trial's own abort signal.
func (b TrialBatchInput) TrialInput(t spec.TrialPlan, branchFrom string) TrialInput {
	ref := b.Spec
	ref.YAML = nil
	return TrialInput{
		RunID: b.RunID, OutDir: b.OutDir, Spec: ref, Trial: t, AgentCommand: b.AgentCommand,
		AgentTimeout: b.AgentTimeout, HeartbeatTimeout: b.HeartbeatTimeout, BranchFrom: branchFrom,
		AbortSignal: TrialAbortSignal(t.ID),
	}
}

// BatchReport is what a TrialBatchWorkflow tells its experiment as it runs: its counts
// so far (cumulative, so a report may be read twice), how many trials run and how many
// wait for a slot, how many of its slots it gives back (cumulative too: slots it has no more trials for), and a stop
// the whole run must make (as in TrialBatchResult).
type BatchReport struct {
	First      int    `json:"first"`
	Tally      Tally  `json:"tally"`
	Running    int    `json:"running"`
	Waiting    int    `json:"waiting"`
	Released   int    `json:"released"`
	NeverArmed string `json:"never_armed,omitempty"`
	Budget     string `json:"budget,omitempty"`
}

// TrialBatchResult is what a TrialBatchWorkflow ends with.
type TrialBatchResult struct {
	Tally Tally `json:"tally"`
	// NeverArmed and Budget stop the run, as in ExperimentResult.
	NeverArmed string `json:"never_armed,omitempty"`
	Budget     string `json:"budget,omitempty"`
}
