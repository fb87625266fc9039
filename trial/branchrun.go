package trial

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// branchFile is the trial folder's account of its --branch start (docs/shim.md,
// "--branch"): written by StartHub, read by Verify.
const branchFile = "branch.json"

// DoneLinePrefix starts the line a branched fault trial's task gets, naming the units the
// clean trial already did: "Already done, do not redo: R-101".
const DoneLinePrefix = "Already done, do not redo: "

// branchStart is a fault trial's start under --branch: the branch it starts from, or why
// it runs whole (None).
type branchStart struct {
	From   string `json:"from"`
	None   string `json:"none,omitempty"`
	Branch Branch `json:"branch"`
}

// summary is result.json's branch line.
func (b branchStart) summary() string {
	if b.None != "" {
		return "none, the trial ran whole: " + b.None
	}
	return fmt.Sprintf("from %s at row %d (done: %s)", b.From, b.Branch.Seq, strings.Join(b.Branch.Done, ", "))
}

// openBranch finds the branch of a fault trial of a --branch run (in.BranchFrom names its
// clean trial, whose folder is in the run folder) and writes it to the trial's folder.
// A clean trial that did not complete with its world right, or that has no branch
// point, gives no branch: the trial runs whole, and the reason is kept.
// A fault that would have fired before the branch point (the 1st call to the write
// tool, on a unit the branched trial never does) gives no branch either: branched, it
// would fire somewhere else, or never.
func openBranch(s *spec.Spec, task spec.Task, cond faults.Condition, in run.TrialInput, trialDir string, simulated bool) branchStart {
	b := branchStart{From: in.BranchFrom}
	b.None = func() string {
		if !simulated {
			return "--branch starts from the simulated world's state; this spec's tools are answered by real servers or a script's adapter"
		}
		from := filepath.FromSlash(in.BranchFrom)
		if !filepath.IsLocal(from) {
			return fmt.Sprintf("the clean trial %q cannot name a folder in the run folder", in.BranchFrom)
		}
		dir := filepath.Join(in.OutDir, "trials", from)
		var res run.TrialResult
		raw, err := os.ReadFile(filepath.Join(dir, "result.json"))
		if err == nil {
			err = json.Unmarshal(raw, &res)
		}
		if err != nil {
			return fmt.Sprintf("the clean trial %s left no result: %v", in.BranchFrom, err)
		}
		if res.Outcome != run.OutcomeCompleted || !res.WorldOK {
			return fmt.Sprintf("the clean trial %s did not complete with its world right (%s, %s)", in.BranchFrom, res.Outcome, res.Verdict)
		}
		log, err := record.ReadFile(filepath.Join(dir, "record.jsonl"))
		if err != nil {
			return fmt.Sprintf("the clean trial %s's record cannot be read: %v", in.BranchFrom, err)
		}
		br, err := branchPoint(s, task, log)
		if err != nil {
			return err.Error()
		}
		if at, ok := hub.PriorFires(s, cond, in.Trial.Seed, br.Prior); ok {
			return fmt.Sprintf("%s fires at %s call to %s, before the branch point (row %d of %s)", cond.ID, faults.Nth(at.Call), at.Tool, br.Seq, in.BranchFrom)
		}
		b.Branch = br
		return ""
	}()
	if raw, err := json.Marshal(b); err == nil {
		WriteFileAtomic(filepath.Join(trialDir, branchFile), raw)
	}
	return b
}

// branchedWorld is the simulated world a branched trial starts in: the spec's, with the
// branch's state over it.
func branchedWorld(s *spec.Spec, br Branch) *world.World {
	w := world.New(s)
	w.Apply(br.State, world.Perform)
	return w
}

// branchedPrompt is the task's text with the line naming the units already done.
func branchedPrompt(prompt string, br Branch) string {
	return strings.TrimRight(prompt, "\n") + "\n\n" + DoneLinePrefix + strings.Join(br.Done, ", ") + "\n"
}

// readBranch is the trial's --branch start, if it had one (ok false when it was no
// branched trial).
func readBranch(trialDir string) (branchStart, bool) {
	var b branchStart
	raw, err := os.ReadFile(filepath.Join(trialDir, branchFile))
	if err != nil || json.Unmarshal(raw, &b) != nil {
		return b, false
	}
	return b, true
}

// markBranched marks the units done before the branch: they were judged from the state
// seeded into the twin (the clean trial's work); a unit the closing message does not name
// takes the clean trial's success as its claim (the agent was told it was done).
func markBranched(res *run.TrialResult, done []string) {
	for i := range res.Units {
		if slices.Contains(done, res.Units[i].Unit) {
			res.Units[i].Branched = true
		}
	}
}
