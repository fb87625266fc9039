package activities

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/crashwall/chaos/run"
)

// Teardown ends the trial and keeps its evidence: it closes the hub (the record gets its
// session end with the final state), stops serving it, writes the sandbox's changes as
// changes.diff when it is a git checkout, and removes the sandbox. It is idempotent: it
// may run twice, or when nothing was started.
func (a *Activities) Teardown(ctx context.Context, in run.TeardownInput) error {
	log := a.logger().With("trial", in.Trial.Trial.ID)
	reason := in.Reason
	if reason == "" {
		reason = "teardown"
	}
	defer a.giveSlot(in.Trial.Key())
	var errs []error
	// Read while the live trial is here: a trial's step carries no spec text.
	s, specErr := a.specOf(in.Trial)
	if lt := a.drop(in.Trial.Key()); lt != nil {
		if err := lt.stop(reason); err != nil {
			errs = append(errs, fmt.Errorf("close the hub: %w", err))
		}
		log.Info("hub closed", "reason", reason)
	}
	// The agent's container, if it runs in one, goes whatever ended the trial (this
	// attempt's, or an earlier attempt's on a worker that died).
	if specErr == nil && s.Agent.IsDocker() {
		if err := a.removeTrialContainers(ctx, in.Trial); err != nil {
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
		if err := writeDiff(ctx, dir, filepath.Join(in.Workspace.TrialDir, "changes.diff")); err != nil {
			// Keep the sandbox: it is the only evidence of what the agent changed.
			log.Warn("kept the sandbox: its changes could not be written", "sandbox", dir, "error", err)
			return errors.Join(append(errs, err)...)
		}
	}
	if !a.ownsSandbox(dir) || (in.Workspace.TrialDir != "" && !recordedSandbox(in.Workspace.TrialDir, dir)) {
		log.Warn("left a workspace folder that is not the sandbox recorded for this trial under the work root", "dir", dir, "work_root", a.workRoot())
		return errors.Join(errs...)
	}
	if err := os.RemoveAll(dir); err != nil {
		errs = append(errs, fmt.Errorf("remove the sandbox %s: %w", dir, err))
	}
	return errors.Join(errs...)
}

// ownsSandbox says dir is a sandbox made under the work root: Teardown removes nothing
// else, whatever its input says.
func (a *Activities) ownsSandbox(dir string) bool {
	rel, err := filepath.Rel(a.workRoot(), dir)
	return err == nil && rel != "." && filepath.IsLocal(rel)
}

// writeDiff writes the changes of the worktree at dir against the commit it was checked
// out at, new files and the agent's own commits included, as a patch. (Files copied in
// from workspace.files show as new.) go-git has no worktree patch, so git does it.
func writeDiff(ctx context.Context, dir, path string) error {
	git := func(args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir, "-c", "core.quotePath=false"}, args...)...)
		// The user's global configuration (external diff tools, colours, pagers) has no
		// say in the evidence.
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_PAGER=cat")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
		}
		return out, nil
	}
	// Mark new files as intended, so the diff shows them; the sandbox's index is
	// thrown away with it.
	if _, err := git("add", "--intent-to-add", "--all"); err != nil {
		return fmt.Errorf("write changes.diff: %w", err)
	}
	base := baseRef
	if _, err := git("rev-parse", "--verify", "--quiet", baseRef+"^{commit}"); err != nil {
		base = "HEAD" // a sandbox from before the base was marked
	}
	patch, err := git("diff", "--no-color", "--no-ext-diff", "--binary", base)
	if err != nil {
		return fmt.Errorf("write changes.diff: %w", err)
	}
	return writeFileAtomic(path, patch)
}
