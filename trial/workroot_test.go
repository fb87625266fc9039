package trial

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
)

// TestReadyWorkRoot (issue 28 item 9): the work root is made 0700; one open to others is
// closed; a link, a file and another user's folder are refused with a sentence.
func TestReadyWorkRoot(t *testing.T) {
	base := t.TempDir()
	fresh := filepath.Join(base, "fresh")
	if _, err := ReadyWorkRoot(fresh); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(fresh); fi.Mode().Perm() != 0o700 {
		t.Errorf("a new work root is %v; want 0700", fi.Mode().Perm())
	}
	open := filepath.Join(base, "open")
	os.Mkdir(open, 0o777)
	os.Chmod(open, 0o777)
	if _, err := ReadyWorkRoot(open); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(open); fi.Mode().Perm() != 0o700 {
		t.Errorf("a work root open to others is left %v; want 0700", fi.Mode().Perm())
	}
	link := filepath.Join(base, "link")
	os.Symlink(fresh, link)
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o600)
	cases := map[string]string{link: "is a symbolic link", file: "is not a folder"}
	if os.Getuid() == 0 {
		other := filepath.Join(base, "other")
		os.Mkdir(other, 0o700)
		os.Chown(other, 65534, 65534)
		cases[other] = "belongs to user 65534, not to this user"
	}
	for root, want := range cases {
		if _, err := ReadyWorkRoot(root); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadyWorkRoot(%s): %v; want %q", root, err, want)
		}
	}
	if got := defaultWorkRoot(); !strings.HasSuffix(got, "chaos-work-"+strconv.Itoa(os.Getuid())) {
		t.Errorf("the default work root is %s; want this user's", got)
	}
}

// TestTrialDirStaysInTheRunFolder (issue 28 item 7): a trial id that would name a folder
// outside the run folder's trials/ is refused.
func TestTrialDirStaysInTheRunFolder(t *testing.T) {
	for _, id := range []string{"../x", "/etc", "a/../../x", "", "..", "a/.."} {
		in := run.TrialInput{OutDir: "/runs/r1", Trial: spec.TrialPlan{ID: id}}
		if dir, err := Dir(in); err == nil {
			t.Errorf("trial id %q: %s; want it refused", id, dir)
		}
	}
	in := run.TrialInput{OutDir: "/runs/r1", Trial: spec.TrialPlan{ID: "v=a/clean/1"}}
	if dir, err := Dir(in); err != nil || dir != filepath.FromSlash("/runs/r1/trials/v=a/clean/1") {
		t.Errorf("trialDir = %s, %v", dir, err)
	}
}
