package trial

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/crashwall/chaos/run"
)

// Teardown ends the trial and keeps its evidence: it closes the hub (the record gets its
// session end with the final state), stops serving it, writes the sandbox's changes as
// changes.diff when it is a git checkout, and removes the sandbox. It is idempotent: it
// may run twice, or when nothing was started.
func (h *Host) Teardown(ctx context.Context, in run.TeardownInput) error {
	log := h.logger().With("trial", in.Trial.Trial.ID)
	reason := in.Reason
	if reason == "" {
		reason = "teardown"
	}
	var errs []error
	// Read while the live trial is here: a trial's step carries no spec text.
	s, specErr := h.specOf(in.Trial)
	if lt := h.drop(in.Trial.Key()); lt != nil {
		if err := lt.stop(reason); err != nil {
			errs = append(errs, fmt.Errorf("close the hub: %w", err))
		}
		log.Info("hub closed", "reason", reason)
	}
	// The agent's container, if it runs in one, goes whatever ended the trial (this
	// attempt's, or an earlier attempt's on a worker that died).
	if specErr == nil && s.Agent.IsDocker() {
		if err := h.removeTrialContainers(ctx, in.Trial); err != nil {
			errs = append(errs, fmt.Errorf("remove the agent's container: %w", err))
		}
	}

	dir := in.Workspace.Dir
	if dir == "" {
		return errors.Join(errs...)
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return errors.Join(errs...) // removed by an earlier Teardown
	}
	if in.Workspace.Git && in.Workspace.TrialDir != "" {
		if err := writeDiff(ctx, dir, in.Workspace); err != nil {
			// The trial folder could not take it: keep the sandbox, the only evidence of
			// what the agent changed, for the retry.
			log.Warn("kept the sandbox: its changes could not be written", "sandbox", dir, "error", err)
			return errors.Join(append(errs, err)...)
		}
	}
	if !h.ownsSandbox(dir) || (in.Workspace.TrialDir != "" && !recordedSandbox(in.Workspace.TrialDir, dir)) {
		log.Warn("left a workspace folder that is not the sandbox recorded for this trial under the work root", "dir", dir, "work_root", h.workRoot())
		return errors.Join(errs...)
	}
	if err := os.RemoveAll(dir); err != nil {
		errs = append(errs, fmt.Errorf("remove the sandbox %s: %w", dir, err))
	}
	return errors.Join(errs...)
}

// ownsSandbox says dir is a sandbox made under the work root: Teardown removes nothing
// else, whatever its input says.
func (h *Host) ownsSandbox(dir string) bool {
	rel, err := filepath.Rel(h.workRoot(), dir)
	return err == nil && rel != "." && filepath.IsLocal(rel)
}

// writeDiff writes the changes of the worktree at dir against the commit it was checked
// out at, new files and the agent's own commits included, as changes.diff in the trial
// folder (files copied in from workspace.files show as new). A sandbox whose changes
// cannot be read (the agent removed or replaced its .git, or broke what it holds) gets
// changes.missing saying why instead, and is removed all the same: only a failure to
// write into the trial folder is an error.
func writeDiff(ctx context.Context, dir string, ws run.Workspace) error {
	patch, err := sandboxDiff(ctx, dir, ws.Base)
	missing := filepath.Join(ws.TrialDir, "changes.missing")
	if errors.Is(err, errTampered) {
		why := strings.TrimPrefix(err.Error(), errTampered.Error()+": ")
		return WriteFileAtomic(missing, []byte("no changes.diff: "+why+"\n"))
	}
	if err != nil {
		return fmt.Errorf("write changes.diff: %w", err)
	}
	os.Remove(missing)
	return WriteFileAtomic(filepath.Join(ws.TrialDir, "changes.diff"), patch)
}
