// Package activities holds the Temporal activities of a trial and of a run: one struct
// holding the dependencies, registered once. A trial's activities are thin wrappers over
// package trial (which knows nothing of Temporal): they add the heartbeats, the error
// types the workflows act on (ErrBadInput, ErrHeartbeatLost, a cancel), and the spec text
// read from the run's history. A worker's trial slots are its trial queue's activity slots
// (worker.NewWorker), which Temporal's own poller keeps.
//
//	RunTrial          SetUpTrial + RunWatchedAgent (+ FinishTrial) in one activity
//	SetUpTrial        trial.Host.SetUp: PrepareWorkspace + StartHub
//	RunWatchedAgent   RunAgent with WatchEvents inside it; FinishTrial for an agent that ended by itself
//	WatchEvents       trial.Host.Watch -> signal "abort"
//	FinishTrial       trial.Host.Finish: Verify + Teardown
//	Aggregate         manifest.json, verdicts.json, summary.txt, report; the results database
//
// The input and output types live in package run (github.com/crashwall/chaos/run):
// workflows imports activities, so importing workflows here would be an import cycle.
package activities
