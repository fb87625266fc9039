package trial

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
)

// PrepareWorkspace makes the trial's folder in the run folder (fresh: a retried trial
// keeps nothing of the failed attempt) with the spec in it, and the agent's sandbox: a
// checkout of the spec's repo at its ref, or an empty folder, plus the spec's files.
func (h *Host) PrepareWorkspace(ctx context.Context, in run.TrialInput) (run.Workspace, error) {
	s, err := ParseSpec(in.Spec)
	if err != nil {
		return run.Workspace{}, err
	}
	dir, err := Dir(in)
	if err != nil {
		return run.Workspace{}, badInput(err)
	}
	// An earlier attempt's sandbox goes by its record, before its trial folder does.
	h.removeRecordedSandbox(dir)
	if err := os.RemoveAll(dir); err != nil {
		return run.Workspace{}, fmt.Errorf("clear the trial folder %s left by an earlier attempt: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return run.Workspace{}, fmt.Errorf("create the trial folder: %w", err)
	}
	ws := run.Workspace{TrialDir: dir, SpecPath: filepath.Join(dir, "spec.yaml")}
	if err := WriteFileAtomic(ws.SpecPath, in.Spec.YAML); err != nil {
		return run.Workspace{}, fmt.Errorf("write the trial's copy of the spec: %w", err)
	}

	// A fresh folder of its own, never one that was there: so removing it removes only
	// what this attempt made. Its path is recorded in the trial folder, the exact record
	// by which Teardown (or the next attempt) removes it and nothing else.
	root, err := h.readyWorkRoot()
	if err != nil {
		return run.Workspace{}, badInput(err)
	}
	if ws.Dir, err = os.MkdirTemp(root, spec.PathSafe(in.RunID+"-"+in.Trial.ID)+"-"); err != nil {
		return run.Workspace{}, fmt.Errorf("create the sandbox: %w", err)
	}
	if err := WriteFileAtomic(filepath.Join(dir, sandboxRecord), []byte(ws.Dir)); err != nil {
		os.Remove(ws.Dir)
		return run.Workspace{}, fmt.Errorf("record the sandbox: %w", err)
	}
	if err := h.fillSandbox(ctx, s, specDir(in.Spec), &ws); err != nil {
		// The workflow never learns of a sandbox whose preparation failed, so no Teardown
		// would remove it.
		os.RemoveAll(ws.Dir)
		return run.Workspace{}, err
	}
	h.logger().Info("workspace ready", "trial", in.Trial.ID, "sandbox", ws.Dir, "git", ws.Git)
	return ws, nil
}

func (h *Host) fillSandbox(ctx context.Context, s *spec.Spec, base string, ws *run.Workspace) error {
	if s.Workspace.Repo != "" {
		h, err := checkout(ctx, repoLocation(s.Workspace.Repo, base), s.Workspace.Ref, ws.Dir)
		if err != nil {
			return err
		}
		ws.Git, ws.Base = true, h.String()
	}
	for _, f := range s.Workspace.Files {
		// The loader let only paths inside the spec's folder through; a link may still
		// lead out of it, here or on this worker's copy.
		src, err := spec.ResolveIn(base, f)
		if errors.Is(err, fs.ErrNotExist) {
			return badInput(fmt.Errorf("workspace.files: %s does not exist (paths are relative to the spec's folder %s)", f, base))
		}
		if err != nil {
			return badInput(fmt.Errorf("workspace.files: %w", err))
		}
		// The file keeps its relative path in the sandbox, and nothing on the way there
		// may be a link (a checkout can hold one) that would take the write elsewhere.
		dst := filepath.Join(ws.Dir, filepath.Clean(f))
		if err := noLinkOnTheWay(ws.Dir, filepath.Dir(dst)); err != nil {
			return badInput(fmt.Errorf("workspace.files: %s: %w", f, err))
		}
		if err := os.RemoveAll(dst); err != nil {
			return fmt.Errorf("workspace.files: replace %s in the sandbox: %w", f, err)
		}
		if err := copyPath(src, dst); err != nil {
			return fmt.Errorf("workspace.files: copy %s into the sandbox: %w", f, err)
		}
	}
	return nil
}

// sandboxRecord is the file in the trial folder that holds the path of the sandbox
// PrepareWorkspace made for it.
const sandboxRecord = ".sandbox"

// removeRecordedSandbox removes the sandbox an earlier attempt recorded in trialDir, if
// it is one of this work root's.
func (h *Host) removeRecordedSandbox(trialDir string) {
	b, err := os.ReadFile(filepath.Join(trialDir, sandboxRecord))
	if err != nil {
		return
	}
	if dir := string(b); h.ownsSandbox(dir) {
		os.RemoveAll(dir)
	}
}

// recordedSandbox says whether dir is the sandbox recorded in trialDir.
func recordedSandbox(trialDir, dir string) bool {
	b, err := os.ReadFile(filepath.Join(trialDir, sandboxRecord))
	return err == nil && string(b) == dir
}

// noLinkOnTheWay says whether every existing folder from root down to dir is a real
// folder, not a symbolic link.
func noLinkOnTheWay(root, dir string) error {
	rel, err := filepath.Rel(root, dir)
	if err != nil || !(filepath.IsLocal(rel) || rel == ".") {
		return fmt.Errorf("%s is outside the sandbox", dir)
	}
	p := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if part == "." {
			continue
		}
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("the sandbox holds a symbolic link at %s; a file is never written through one", p)
		}
	}
	return nil
}

// specDir is the folder the spec's relative paths are relative to.
func specDir(ref run.SpecRef) string {
	if ref.Path == "" {
		return "."
	}
	return filepath.Dir(ref.Path)
}

// scpLike is git's user@host:path form of a remote.
var scpLike = regexp.MustCompile(`^[A-Za-z0-9._-]+@[^:/]+:`)

// repoLocation is the repo as go-git takes it: a URL as written, a relative path
// relative to the spec's folder.
func repoLocation(repo, base string) string {
	if strings.Contains(repo, "://") || scpLike.MatchString(repo) || filepath.IsAbs(repo) {
		return repo
	}
	return filepath.Join(base, repo)
}

// checkout clones repo into dir and checks out ref (a branch, tag or commit; the
// default branch when empty), and returns the commit checked out.
func checkout(ctx context.Context, repo, ref, dir string) (plumbing.Hash, error) {
	cloneLocalInProcess()
	r, err := git.PlainCloneContext(ctx, dir, false, &git.CloneOptions{URL: repo, Tags: git.AllTags})
	if err != nil {
		err = fmt.Errorf("workspace.repo: cannot clone %s: %w", repo, err)
		if errors.Is(err, transport.ErrRepositoryNotFound) || errors.Is(err, transport.ErrEmptyRemoteRepository) {
			return plumbing.ZeroHash, badInput(err)
		}
		return plumbing.ZeroHash, err
	}
	if ref == "" {
		head, err := r.Head()
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("workspace.repo: %s has no commit to check out: %w", repo, err)
		}
		return head.Hash(), markBase(r, head.Hash())
	}
	var hash *plumbing.Hash
	// A branch of the remote is origin/<branch> in the clone.
	for _, rev := range []string{ref, "origin/" + ref} {
		if h, err := r.ResolveRevision(plumbing.Revision(rev)); err == nil {
			hash = h
			break
		}
	}
	if hash == nil {
		return plumbing.ZeroHash, badInput(fmt.Errorf("workspace.ref %q is not a branch, tag or commit of %s", ref, repo))
	}
	wt, err := r.Worktree()
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("workspace.repo: open the worktree of the clone: %w", err)
	}
	if err := wt.Checkout(&git.CheckoutOptions{Hash: *hash, Force: true}); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("workspace.ref: check out %s (%s): %w", ref, hash, err)
	}
	return *hash, markBase(r, *hash)
}

// baseRef names the commit the sandbox was checked out at, for changes.diff: the agent
// may commit, move HEAD or switch branches, and its changes are still measured from here.
const baseRef = "refs/chaos/base"

func markBase(r *git.Repository, h plumbing.Hash) error {
	if err := r.Storer.SetReference(plumbing.NewHashReference(baseRef, h)); err != nil {
		return fmt.Errorf("workspace.repo: mark the checked-out commit: %w", err)
	}
	return nil
}

// copyPath copies a file or a folder tree from src to dst, keeping modes and symlinks.
func copyPath(src, dst string) error {
	info, err := os.Stat(src)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return copyFile(src, dst, info.Mode().Perm())
	}
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			fi, err := d.Info()
			if err != nil {
				return err
			}
			return os.MkdirAll(to, fi.Mode().Perm()|0o700)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, to)
		case d.Type().IsRegular():
			fi, err := d.Info()
			if err != nil {
				return err
			}
			return copyFile(p, to, fi.Mode().Perm())
		}
		return nil // sockets, devices and pipes are not workspace content
	})
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, perm)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}
