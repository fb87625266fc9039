// Package activities holds the activities of a trial and of a run: one struct holding the
// dependencies, a file per activity. They are thin: the work is in proxies, record, spec
// and faults, which know nothing of Temporal.
//
// NOTE (from the lead): the input and output types live in package run
// (github.com/crashwall/chaos/run): run.TrialInput, run.Workspace, run.HubInfo, ... They
// were first written in workflows/types.go, which now only aliases them. Import run, never
// workflows: workflows imports activities, so importing workflows here is an import cycle.
package activities
