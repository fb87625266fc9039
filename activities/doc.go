// Package activities holds the activities of a trial and of a run: one struct holding the
// dependencies, a file per activity. They are thin: the work is in proxies, record, spec
// and faults, which know nothing of Temporal.
//
//	PrepareWorkspace  trial folder (fresh) + sandbox: git checkout at a ref, copied files
//	StartHub          hub (world, condition, record) served on 127.0.0.1:0; tokens filled in
//	RunAgent          sh -c COMMAND as a process group; stdout, stderr to files; killable
//	WatchEvents       the record as it is written -> abort rules -> signal "abort"
//	Verify            final world x state checks, closing message -> result.json
//	Teardown          close the hub (session_end), changes.diff, remove the sandbox
//	Aggregate         manifest.json, verdicts.json, summary.txt
//
// A trial's activities run in one worker session, so the hub StartHub starts is kept in
// the Activities value, by trial, until Teardown.
//
// The input and output types live in package run (github.com/crashwall/chaos/run):
// workflows imports activities, so importing workflows here would be an import cycle.
package activities
