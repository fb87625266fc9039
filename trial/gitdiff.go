package trial

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	fdiff "github.com/go-git/go-git/v5/plumbing/format/diff"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/utils/diff"
	dmp "github.com/sergi/go-diff/diffmatchpatch"
)

// The sandbox's changes are read, never run: the agent wrote its .git and its worktree,
// and whatever git would execute on its behalf (core.fsmonitor, hooks, diff.*.textconv,
// filter.*.clean, diff.external, a .git file's gitdir: elsewhere) is data here. go-git
// reads the object store of the .git folder chaos made (bound to it: no link or
// alternates file leads out), the worktree is read through an os.Root of the sandbox
// (no link is followed), nothing is written into either, and no program is started.
//
//	sandbox/.git (a real folder) ──go-git──> base commit's tree ─┐
//	sandbox/** (lstat, os.Root; .gitignore'd new files left out) ┴─> unified diff ─> changes.diff

// errTampered is a sandbox whose changes cannot be read because the agent changed what
// they are read from: the trial says so in changes.missing instead of a diff.
var errTampered = errors.New("tampered sandbox")

// maxDiffFile is the largest file whose lines go into the diff; a larger one is shown as
// a binary change.
const maxDiffFile = 8 << 20

// sandboxDiff is the unified diff of the worktree at dir against the commit base (a
// hash; "" for the sandbox's refs/chaos/base). An error wrapping errTampered says why
// there is none.
func sandboxDiff(ctx context.Context, dir, base string) ([]byte, error) {
	gitDir := filepath.Join(dir, ".git")
	fi, err := os.Lstat(gitDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w: the sandbox has no .git folder any more (the agent removed it)", errTampered)
	case err != nil:
		return nil, fmt.Errorf("%w: read the sandbox's .git: %v", errTampered, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		to, _ := os.Readlink(gitDir)
		return nil, fmt.Errorf("%w: the sandbox's .git is a symbolic link to %s, not the folder chaos made; it is not followed", errTampered, to)
	case !fi.IsDir():
		b, _ := os.ReadFile(gitDir)
		what := strings.TrimSpace(string(firstLine(b)))
		return nil, fmt.Errorf("%w: the sandbox's .git is a file (%q), not the folder chaos made; a gitdir: elsewhere is not followed", errTampered, clipText(what, 120))
	}
	bound := osfs.New(gitDir, osfs.WithBoundOS())
	st := filesystem.NewStorageWithOptions(bound, cache.NewObjectLRUDefault(), filesystem.Options{AlternatesFS: bound})
	defer st.Close()
	var h plumbing.Hash
	if base != "" {
		h = plumbing.NewHash(base)
	} else {
		ref, err := st.Reference(baseRef)
		if err != nil {
			return nil, fmt.Errorf("%w: the sandbox's .git has no %s (the commit it was checked out at): %v", errTampered, baseRef, err)
		}
		h = ref.Hash()
	}
	// The base's hash is recorded outside the sandbox; every object of it read here must
	// hash to its name, so an object store the agent rewrote cannot change the evidence.
	if err := verifyObject(st, plumbing.CommitObject, h); err != nil {
		return nil, fmt.Errorf("%w: the base commit %s cannot be read from the sandbox's .git: %v", errTampered, h, err)
	}
	commit, err := object.GetCommit(st, h)
	if err != nil {
		return nil, fmt.Errorf("%w: the base commit %s cannot be read from the sandbox's .git: %v", errTampered, h, err)
	}
	tree, err := commit.Tree()
	if err != nil {
		return nil, fmt.Errorf("%w: the tree of the base commit %s cannot be read: %v", errTampered, h, err)
	}
	if err := verifyTree(ctx, st, commit.TreeHash); err != nil {
		return nil, fmt.Errorf("%w: the base commit's files cannot be read from the sandbox's .git: %v", errTampered, err)
	}
	from := map[string]*diffFile{}
	// The walk's entries carry the hashes the (verified) trees name; a blob is read, and
	// checked against that name, only when its file changed.
	walker := object.NewTreeWalker(tree, true, nil)
	defer walker.Close()
	for {
		name, e, werr := walker.Next()
		if werr == io.EOF {
			break
		}
		if werr != nil {
			err = werr
			break
		}
		if e.Mode == filemode.Dir || e.Mode == filemode.Submodule {
			continue
		}
		from[name] = &diffFile{path: name, mode: e.Mode, hash: e.Hash, read: baseBlob(st, e.Hash, name)}
		if err = ctx.Err(); err != nil {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: the files of the base commit %s cannot be read: %v", errTampered, h, err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: open the sandbox: %v", errTampered, err)
	}
	defer root.Close() // changed files are read again from it
	to, err := worktreeFiles(ctx, root, from)
	if err != nil {
		return nil, err
	}
	var patch filesPatch
	for _, p := range unionPaths(from, to) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		a, b := from[p], to[p]
		if a != nil && b != nil && a.hash == b.hash && a.mode == b.mode {
			continue
		}
		fp, err := filePatchOf(a, b)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", errTampered, p, err)
		}
		patch = append(patch, fp)
	}
	var out bytes.Buffer
	if err := fdiff.NewUnifiedEncoder(&out, fdiff.DefaultContextLines).Encode(patch); err != nil {
		return nil, fmt.Errorf("encode the diff: %w", err)
	}
	return out.Bytes(), nil
}

// worktreeFiles reads every file of the worktree root, without following a link: a
// link is its target's text, as git stores it. New files a .gitignore leaves out are
// left out; a file the base holds is always read. Folders named .git are never read.
func worktreeFiles(ctx context.Context, root *os.Root, tracked map[string]*diffFile) (map[string]*diffFile, error) {
	out := map[string]*diffFile{}
	var ignore []gitignore.Pattern
	var walk func(rel string) error
	walk = func(rel string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		domain := splitPath(rel)
		ignore = append(ignore, readIgnore(root, rel, domain)...)
		matcher := gitignore.NewMatcher(ignore)
		f, err := root.Open(orDot(rel))
		if err != nil {
			return err
		}
		entries, err := f.ReadDir(-1)
		f.Close()
		if err != nil {
			return err
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
		for _, e := range entries {
			p := path.Join(rel, e.Name())
			t := e.Type()
			switch {
			case e.Name() == ".git":
				continue
			case t.IsDir():
				if matcher.Match(splitPath(p), true) && !trackedUnder(tracked, p) {
					continue
				}
				if err := walk(p); err != nil {
					return err
				}
			case tracked[p] == nil && matcher.Match(splitPath(p), false):
				continue
			case t&fs.ModeSymlink != 0:
				target, err := root.Readlink(p)
				if err != nil {
					return err
				}
				out[p] = newDiffFile(p, filemode.Symlink, []byte(target))
			case t.IsRegular():
				mode := filemode.Regular
				if info, err := e.Info(); err == nil && info.Mode().Perm()&0o111 != 0 {
					mode = filemode.Executable
				}
				df, err := readWorktreeFile(root, p, mode)
				if err != nil {
					return err
				}
				out[p] = df
			}
			// sockets, pipes and devices are not content git keeps
		}
		return nil
	}
	if err := walk(""); err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: read the sandbox's files: %v", errTampered, err)
	}
	return out, nil
}

// readIgnore is the patterns of the .gitignore in the folder rel, read through root.
func readIgnore(root *os.Root, rel string, domain []string) []gitignore.Pattern {
	f, err := root.Open(path.Join(orDot(rel), ".gitignore"))
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	var ps []gitignore.Pattern
	sc := bufio.NewScanner(io.LimitReader(f, 1<<20))
	for sc.Scan() {
		if s := sc.Text(); !strings.HasPrefix(s, "#") && strings.TrimSpace(s) != "" {
			ps = append(ps, gitignore.ParsePattern(s, domain))
		}
	}
	return ps
}

// readWorktreeFile hashes the file at p as git would (streamed: nothing of it is kept);
// its content is read again only if it changed.
func readWorktreeFile(root *os.Root, p string, mode filemode.FileMode) (*diffFile, error) {
	f, err := root.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is no longer a regular file", p)
	}
	hw := plumbing.NewHasher(plumbing.BlobObject, fi.Size())
	if n, err := io.Copy(hw, f); err != nil || n != fi.Size() {
		return nil, fmt.Errorf("%s changed while it was read: %v", p, err)
	}
	df := &diffFile{path: p, mode: mode, hash: hw.Sum(), size: fi.Size()}
	df.read = func() ([]byte, error) {
		g, err := root.Open(p)
		if err != nil {
			return nil, err
		}
		defer g.Close()
		return io.ReadAll(io.LimitReader(g, maxDiffFile+1))
	}
	return df, nil
}

func newDiffFile(p string, mode filemode.FileMode, content []byte) *diffFile {
	return &diffFile{path: p, mode: mode, hash: plumbing.ComputeHash(plumbing.BlobObject, content), content: content, loaded: true,
		binary: isBinary(content)}
}

// isBinary is git's rule: a NUL in the first 8000 bytes.
func isBinary(b []byte) bool {
	if len(b) > 8000 {
		b = b[:8000]
	}
	return bytes.IndexByte(b, 0) >= 0
}

// trackedUnder says whether the base holds a file under the folder p.
func trackedUnder(tracked map[string]*diffFile, p string) bool {
	for name := range tracked {
		if strings.HasPrefix(name, p+"/") {
			return true
		}
	}
	return false
}

func splitPath(p string) []string {
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

func orDot(p string) string {
	if p == "" {
		return "."
	}
	return p
}

func unionPaths(a, b map[string]*diffFile) []string {
	var out []string
	for p := range a {
		out = append(out, p)
	}
	for p := range b {
		if a[p] == nil {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

func firstLine(b []byte) []byte {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i]
	}
	return b
}

func clipText(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// diffFile is one side of a file's change: a blob of the base commit or a file of the
// worktree.
type diffFile struct {
	path    string
	mode    filemode.FileMode
	hash    plumbing.Hash
	read    func() ([]byte, error) // its content, read when the file changed
	size    int64
	content []byte
	loaded  bool
	binary  bool
}

func (f *diffFile) Hash() plumbing.Hash     { return f.hash }
func (f *diffFile) Mode() filemode.FileMode { return f.mode }
func (f *diffFile) Path() string            { return f.path }

func (f *diffFile) load() error {
	if f == nil || f.loaded {
		return nil
	}
	f.loaded = true
	if f.size > maxDiffFile {
		f.binary = true
		return nil
	}
	var err error
	if f.content, err = f.read(); err != nil {
		return err
	}
	f.binary = isBinary(f.content) || int64(len(f.content)) > maxDiffFile
	return nil
}

// baseBlob reads the blob h of the base (the file name) and checks that it hashes to h:
// a blob the agent rewrote in its .git is an error, never evidence. A blob over
// maxDiffFile is checked as it streams and read as nothing (a binary change).
func baseBlob(st storer.EncodedObjectStorer, h plumbing.Hash, name string) func() ([]byte, error) {
	return func() ([]byte, error) {
		obj, err := st.EncodedObject(plumbing.BlobObject, h)
		if err != nil {
			return nil, err
		}
		if obj.Size() > maxDiffFile {
			if err := verifyObject(st, plumbing.BlobObject, h); err != nil {
				return nil, fmt.Errorf("%w: %s: %v", errTampered, name, err)
			}
			return make([]byte, maxDiffFile+1), nil
		}
		r, err := obj.Reader()
		if err != nil {
			return nil, err
		}
		defer r.Close()
		content, err := io.ReadAll(io.LimitReader(r, maxDiffFile+1))
		if err != nil {
			return nil, err
		}
		if plumbing.ComputeHash(plumbing.BlobObject, content) != h {
			return nil, fmt.Errorf("%w: the object %s of %s does not hash to its name (rewritten in the sandbox's .git)", errTampered, h, name)
		}
		return content, nil
	}
}

// verifyObject says whether the object h of type t in st hashes to h.
func verifyObject(st storer.EncodedObjectStorer, t plumbing.ObjectType, h plumbing.Hash) error {
	obj, err := st.EncodedObject(t, h)
	if err != nil {
		return err
	}
	r, err := obj.Reader()
	if err != nil {
		return err
	}
	defer r.Close()
	hw := plumbing.NewHasher(t, obj.Size())
	if _, err := io.Copy(hw, io.LimitReader(r, obj.Size())); err != nil {
		return err
	}
	if hw.Sum() != h {
		return fmt.Errorf("the object %s does not hash to its name (rewritten)", h)
	}
	return nil
}

// verifyTree checks the tree h and every tree below it (the files' own contents are
// checked as they are read, and where a worktree file hashes to its entry).
func verifyTree(ctx context.Context, st storer.EncodedObjectStorer, h plumbing.Hash) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := verifyObject(st, plumbing.TreeObject, h); err != nil {
		return err
	}
	tree, err := object.GetTree(st, h)
	if err != nil {
		return err
	}
	for _, e := range tree.Entries {
		if e.Mode == filemode.Dir {
			if err := verifyTree(ctx, st, e.Hash); err != nil {
				return err
			}
		}
	}
	return nil
}

type filesPatch []fdiff.FilePatch

func (p filesPatch) FilePatches() []fdiff.FilePatch { return p }
func (p filesPatch) Message() string                { return "" }

type filePatch struct {
	from, to *diffFile
	binary   bool
	chunks   []fdiff.Chunk
}

func (p *filePatch) IsBinary() bool { return p.binary }
func (p *filePatch) Files() (fdiff.File, fdiff.File) {
	var from, to fdiff.File
	if p.from != nil {
		from = p.from
	}
	if p.to != nil {
		to = p.to
	}
	return from, to
}
func (p *filePatch) Chunks() []fdiff.Chunk { return p.chunks }

type chunk struct {
	text string
	op   fdiff.Operation
}

func (c chunk) Content() string       { return c.text }
func (c chunk) Type() fdiff.Operation { return c.op }

func filePatchOf(from, to *diffFile) (*filePatch, error) {
	if err := from.load(); err != nil {
		return nil, err
	}
	if err := to.load(); err != nil {
		return nil, err
	}
	fp := &filePatch{from: from, to: to}
	if (from != nil && from.binary) || (to != nil && to.binary) {
		fp.binary = true
		return fp, nil
	}
	var a, b string
	if from != nil {
		a = string(from.content)
	}
	if to != nil {
		b = string(to.content)
	}
	for _, d := range diff.Do(a, b) {
		op := fdiff.Equal
		switch d.Type {
		case dmp.DiffDelete:
			op = fdiff.Delete
		case dmp.DiffInsert:
			op = fdiff.Add
		}
		fp.chunks = append(fp.chunks, chunk{d.Text, op})
	}
	return fp, nil
}
