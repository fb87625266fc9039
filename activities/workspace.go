package activities

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
func (a *Activities) PrepareWorkspace(ctx context.Context, in run.TrialInput) (run.Workspace, error) {
	s, err := parseSpec(in.Spec)
	if err != nil {
		return run.Workspace{}, err
	}
	dir, err := trialDir(in)
	if err != nil {
		return run.Workspace{}, badInput(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return run.Workspace{}, fmt.Errorf("clear the trial folder %s left by an earlier attempt: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return run.Workspace{}, fmt.Errorf("create the trial folder: %w", err)
	}
	ws := run.Workspace{TrialDir: dir, SpecPath: filepath.Join(dir, "spec.yaml")}
	if err := writeFileAtomic(ws.SpecPath, in.Spec.YAML); err != nil {
		return run.Workspace{}, fmt.Errorf("write the trial's copy of the spec: %w", err)
	}

	ws.Dir = filepath.Join(a.workRoot(), spec.PathSafe(in.RunID+"-"+in.Trial.ID))
	if err := os.RemoveAll(ws.Dir); err != nil {
		return run.Workspace{}, fmt.Errorf("clear the sandbox %s left by an earlier attempt: %w", ws.Dir, err)
	}
	if err := a.fillSandbox(ctx, s, specDir(in.Spec), &ws); err != nil {
		// The workflow never learns of a sandbox whose preparation failed, so no Teardown
		// would remove it.
		os.RemoveAll(ws.Dir)
		return run.Workspace{}, err
	}
	a.logger().Info("workspace ready", "trial", in.Trial.ID, "sandbox", ws.Dir, "git", ws.Git)
	return ws, nil
}

func (a *Activities) fillSandbox(ctx context.Context, s *spec.Spec, base string, ws *run.Workspace) error {
	if s.Workspace.Repo != "" {
		if err := checkout(ctx, repoLocation(s.Workspace.Repo, base), s.Workspace.Ref, ws.Dir); err != nil {
			return err
		}
		ws.Git = true
	} else if err := os.MkdirAll(ws.Dir, 0o755); err != nil {
		return fmt.Errorf("create the sandbox: %w", err)
	}
	for _, f := range s.Workspace.Files {
		src := f
		if !filepath.IsAbs(src) {
			src = filepath.Join(base, src)
		}
		// A file named inside the spec's folder keeps its relative path in the sandbox;
		// one from elsewhere lands at the top.
		dst := filepath.Join(ws.Dir, filepath.Base(f))
		if rel := filepath.Clean(f); filepath.IsLocal(rel) {
			dst = filepath.Join(ws.Dir, rel)
		}
		if _, err := os.Stat(src); errors.Is(err, fs.ErrNotExist) {
			return badInput(fmt.Errorf("workspace.files: %s does not exist (paths are relative to the spec's folder %s)", f, base))
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
// default branch when empty).
func checkout(ctx context.Context, repo, ref, dir string) error {
	r, err := git.PlainCloneContext(ctx, dir, false, &git.CloneOptions{URL: repo, Tags: git.AllTags})
	if err != nil {
		err = fmt.Errorf("workspace.repo: cannot clone %s: %w", repo, err)
		if errors.Is(err, transport.ErrRepositoryNotFound) || errors.Is(err, transport.ErrEmptyRemoteRepository) {
			return badInput(err)
		}
		return err
	}
	if ref == "" {
		head, err := r.Head()
		if err != nil {
			return fmt.Errorf("workspace.repo: %s has no commit to check out: %w", repo, err)
		}
		return markBase(r, head.Hash())
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
		return badInput(fmt.Errorf("workspace.ref %q is not a branch, tag or commit of %s", ref, repo))
	}
	wt, err := r.Worktree()
	if err != nil {
		return fmt.Errorf("workspace.repo: open the worktree of the clone: %w", err)
	}
	if err := wt.Checkout(&git.CheckoutOptions{Hash: *hash, Force: true}); err != nil {
		return fmt.Errorf("workspace.ref: check out %s (%s): %w", ref, hash, err)
	}
	return markBase(r, *hash)
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
