package run_test

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/tests/chaosbin"
	"github.com/crashwall/chaos/tests/testkit"
)

// uiAfterLine is what chaos run prints of its web UI once the run has ended.
var uiAfterLine = regexp.MustCompile(`(?m)^  To open it: (chaos server[^,]*), then (http://\S+)$`)

// goRun is how the README starts every chaos command; the tests put the binary they built
// in its place and keep the rest of the line as the README prints it.
const goRun = "go run ./cmd/chaos"

// readmeCommands are the chaos command lines of README.md's ```sh blocks, in order, each
// with its continuation lines (a trailing backslash) joined as a shell joins them.
func readmeCommands(t testing.TB) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(chaosbin.Root(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	inBlock, line := false, ""
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case !inBlock && l == "```sh":
			inBlock = true
		case inBlock && l == "```":
			inBlock = false
		case inBlock:
			if strings.HasSuffix(l, `\`) {
				line += strings.TrimSuffix(l, `\`)
				continue
			}
			line += l
			if strings.HasPrefix(line, goRun+" ") {
				cmds = append(cmds, line)
			}
			line = ""
		}
	}
	return cmds
}

// readmeBlockWith is the README's ```sh block that has a line starting with prefix, its
// lines in order (continuations joined).
func readmeBlockWith(t testing.TB, prefix string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(chaosbin.Root(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var block []string
	inBlock, line := false, ""
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case !inBlock && l == "```sh":
			inBlock, block = true, nil
		case inBlock && l == "```":
			inBlock = false
			for _, c := range block {
				if strings.HasPrefix(c, prefix) {
					return block
				}
			}
		case inBlock:
			if strings.HasSuffix(l, `\`) {
				line += strings.TrimSuffix(l, `\`)
				continue
			}
			block = append(block, line+l)
			line = ""
		}
	}
	t.Fatalf("README.md has no sh block with a line starting %q", prefix)
	return nil
}

// readmeCommand is the one README command line that starts with goRun+" "+prefix; the test
// fails when the README has none or more than one.
func readmeCommand(t testing.TB, cmds []string, prefix string) string {
	t.Helper()
	var found []string
	for _, c := range cmds {
		if strings.HasPrefix(c, goRun+" "+prefix) {
			found = append(found, c)
		}
	}
	if len(found) != 1 {
		t.Fatalf("README.md has %d command lines starting %q in its sh blocks, want 1:\n%s", len(found), goRun+" "+prefix, strings.Join(cmds, "\n"))
	}
	return found[0]
}

// shellRun runs a README command line with sh in dir, the built chaos binary in place of
// `go run ./cmd/chaos`, as a user's shell runs it (quotes, $PWD and all).
func shellRun(t testing.TB, dir string, env []string, timeout time.Duration, line string) testkit.Result {
	t.Helper()
	script := spec.ShellQuote(chaosBin) + strings.TrimPrefix(line, goRun)
	return testkit.RunIn(t, dir, "/bin/sh", env, timeout, "-c", script)
}

// TestREADMECommands runs the README's commands as a newcomer types them, read from
// README.md itself so that a README change that breaks one fails here: `chaos demo` from a
// folder of their own (the demo's run folder is relative to it), `chaos show` of the run
// id the demo printed, `chaos faults` of the example from the repository's root, and each
// agent example (Claude Code, Codex, the Agents SDK) against the stand-in model, narrowed
// to two conditions (checkAgentExampleIn).
func TestREADMECommands(t *testing.T) {
	cmds := readmeCommands(t)
	env := testkit.Env(t)

	t.Run("demo and show", func(t *testing.T) {
		home := t.TempDir()
		line := readmeCommand(t, cmds, "demo")
		if line != goRun+" demo" {
			t.Fatalf("the README's demo is %q: this test runs %q (the demo's data directory is the test's)", line, goRun+" demo")
		}
		data := filepath.Join(t.TempDir(), "data")
		// The demo's 38 trials: a bound for a starved machine, not a speed requirement.
		const demoTimeout = 20 * time.Minute
		demo := testkit.RunIn(t, home, chaosBin, env, demoTimeout, "demo", "--data-dir", data)
		demo.MustSucceed(t, "chaos demo")
		id := runIDOf(t, demo.Stdout)
		// The demo tells a clean story: no trial lost to the example's own limits, and
		// every verdict it prints is one the README explains.
		readme, _ := os.ReadFile(filepath.Join(chaosbin.Root(), "README.md"))
		for _, m := range regexp.MustCompile(`(?m)^  ([a-z_]+) +\d+$`).FindAllStringSubmatch(demo.Stdout, -1) {
			if m[1] == "no_verdict" {
				t.Errorf("the demo has no_verdict trials: a newcomer reads them as chaos failing\n%s", demo.Stdout)
			}
			if !strings.Contains(string(readme), "`"+m[1]+"` (") {
				t.Errorf("the demo prints verdict %s, which the README does not explain", m[1])
			}
		}
		folder := filepath.Join(home, "chaos-runs", "demo", id)
		if !strings.Contains(demo.Stdout, "run "+id+" -> "+folder+"\n") {
			t.Errorf("chaos demo does not name its run folder %s after the run id:\n%s", folder, demo.Stdout)
		}
		for _, f := range []string{"manifest.json", "summary.txt", "report.html", "verdicts.json"} {
			if !exists(filepath.Join(folder, f)) {
				t.Errorf("the demo's run folder %s has no %s", folder, f)
			}
		}
		var m struct {
			RunID string `json:"run_id"`
			Spec  struct {
				Path string `json:"path"`
			} `json:"spec"`
		}
		testkit.ReadJSON(t, filepath.Join(folder, "manifest.json"), &m)
		if m.RunID != id {
			t.Errorf("manifest.json: run_id %q, want the id the demo printed, %q", m.RunID, id)
		}
		// The spec the demo ran is kept with the run, not in a temporary folder it deletes.
		if want := filepath.Join(folder, "spec.yaml"); m.Spec.Path != want {
			t.Errorf("manifest.json: spec.path %q, want %q", m.Spec.Path, want)
		} else if b, err := os.ReadFile(want); err != nil || !strings.Contains(string(b), "name: support-ticket") {
			t.Errorf("the kept spec %s: %v %.40q", want, err, b)
		}

		// The demo's web UI died with it; the console says how to open the run's history
		// again, and that way works: chaos server on the data directory serves it.
		ui := uiAfterLine.FindStringSubmatch(demo.Stdout)
		if ui == nil {
			t.Errorf("chaos demo does not say how to open its history once it has ended:\n%s", demo.Stdout)
		} else {
			if want := "chaos server --data-dir " + data; ui[1] != want {
				t.Errorf("the demo says to open its history with %q, want %q", ui[1], want)
			}
			link, err := url.Parse(ui[2])
			if err != nil || link.Port() != "8233" || !strings.HasSuffix(link.Path, "/workflows/"+run.ExperimentWorkflowID(id)) {
				t.Errorf("the printed link %q is not chaos server's UI (port 8233) on the run's workflow (%v)", ui[2], err)
			} else {
				// The server on a free UI port (8233 may be taken on a test machine); the
				// link's path as printed, through the UI's API.
				srv := startServer(t, env, data, 0)
				api := srv.UI + "/api/v1" + link.Path
				if code, body := get(t, api); code != http.StatusOK || !strings.Contains(body, run.ExperimentWorkflowID(id)) {
					t.Errorf("GET %s after the demo ended: %d\n%.500s", api, code, body)
				}
				srv.Stop(t)
			}
		}

		show := testkit.RunIn(t, home, chaosBin, env, runTimeout, "show", id)
		show.MustSucceed(t, "chaos show "+id)
		if !regexp.MustCompile(`(?m)^run +` + regexp.QuoteMeta(id) + ` `).MatchString(show.Stdout) {
			t.Errorf("chaos show %s does not show that run:\n%s", id, show.Stdout)
		}
		if !regexp.MustCompile(`(?m)^plan +\d+ trials of support-ticket: `).MatchString(show.Stdout) {
			t.Errorf("chaos show %s: want its plan line as \"plan     N trials of support-ticket: ...\" (once the word plan):\n%s", id, show.Stdout)
		}
	})

	t.Run("faults", func(t *testing.T) {
		line := readmeCommand(t, cmds, "faults ")
		faults := shellRun(t, chaosbin.Root(), env, runTimeout, line)
		faults.MustSucceed(t, line)
		for _, c := range []string{"clean", "phantom_success@update_ticket"} {
			if !strings.Contains(faults.Stdout, c) {
				t.Errorf("%s does not list %s:\n%s", line, c, faults.Stdout)
			}
		}
	})

	t.Run("binary route", func(t *testing.T) {
		// The README's lines for scripts and CI: make build, then bin/chaos, whose exit
		// code the shell sees (go run would turn 3 and 4 into 1).
		block := readmeBlockWith(t, "bin/chaos ")
		if len(block) < 2 || block[0] != "make build" {
			t.Fatalf("the README's block with bin/chaos is %q, want make build first", block)
		}
		line := block[1]
		if !strings.HasPrefix(line, "bin/chaos run examples/support-ticket.yaml --out ci-run;") {
			t.Fatalf("the README's binary route is %q: this test runs the support-ticket example into ci-run", line)
		}
		binary := func(l string) string { return spec.ShellQuote(chaosBin) + strings.TrimPrefix(l, "bin/chaos") }
		dir := workDir(t)
		r := testkit.RunIn(t, dir, "/bin/sh", env, 20*time.Minute, "-c", binary(line))
		r.MustSucceed(t, line)
		if !strings.Contains(r.Stdout, "chaos exited 0\n") {
			t.Errorf("%s did not print its exit code 0:\n%s\n%s", line, r.Stdout, r.Stderr)
		}
		if !exists(filepath.Join(dir, "ci-run", "junit.xml")) {
			t.Errorf("%s wrote no ci-run/junit.xml", line)
		}
		// The same line with an agent that never reaches the wall: exit 4 reaches the
		// script as 4.
		unreached := strings.Replace(line, "--out ci-run", "--out ci-run-4 --only clean -- true", 1)
		r = testkit.RunIn(t, dir, "/bin/sh", env, 20*time.Minute, "-c", binary(unreached))
		if !strings.Contains(r.Stdout, "chaos exited 4\n") {
			t.Errorf("%s: want the script to see exit 4 (no trial scored)\n%s\n%s", unreached, r.Stdout, r.Stderr)
		}
	})

	t.Run("Claude Code", func(t *testing.T) {
		line := readmeCommand(t, cmds, "run examples/support-ticket-claude-code.yaml")
		claudeBin := filepath.Join(testkit.JSDir(), "node_modules", ".bin")
		if _, err := os.Stat(filepath.Join(claudeBin, "claude")); err != nil {
			t.Fatalf("claude is not installed in tests/js (npm ci --prefix tests/js): %v", err)
		}
		standin := startStandin(t, filepath.Join(chaosbin.Root(), "tests", "model", "testdata", "claude-code.script.yaml"))
		// Claude Code from tests/js on the PATH, with a home of its own (no login, no
		// settings of the machine's user) and the stand-in as its model; the agent inherits
		// this environment from chaos, as the README says.
		home := t.TempDir()
		agentEnv := append(withPath(env, claudeBin), "HOME="+home, "ANTHROPIC_BASE_URL="+standin, "ANTHROPIC_API_KEY=sk-ant-standin",
			"DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
		checkAgentExample(t, agentEnv, line)
	})

	t.Run("Agents SDK", func(t *testing.T) {
		line := readmeCommand(t, cmds, "run examples/support-ticket-agents-sdk.yaml")
		testkit.Node(t, "openai", "@openai/agents")
		standin := startStandin(t, filepath.Join(chaosbin.Root(), "proxies", "llm", "testdata", "support-ticket.script.yaml"))
		// The README's my-agent.mjs is tests/js/agents-sdk-agent.mjs (node follows the link
		// to its node_modules), its model the stand-in through OPENAI_BASE_URL.
		dir := workDir(t)
		if err := os.Symlink(filepath.Join(testkit.JSDir(), "agents-sdk-agent.mjs"), filepath.Join(dir, "my-agent.mjs")); err != nil {
			t.Fatal(err)
		}
		agentEnv := append(withPath(env, filepath.Dir(testkit.Node(t))), "OPENAI_BASE_URL="+standin+"/v1", "OPENAI_API_KEY=sk-standin",
			"OPENAI_AGENTS_DISABLE_TRACING=1")
		checkAgentExampleIn(t, dir, agentEnv, line)
	})

	t.Run("Codex", func(t *testing.T) {
		line := readmeCommand(t, cmds, "run examples/support-ticket-codex.yaml")
		codexBin := filepath.Join(testkit.JSDir(), "node_modules", ".bin")
		if _, err := os.Stat(filepath.Join(codexBin, "codex")); err == nil {
			// Codex from tests/js with a home of its own whose config.toml names the
			// stand-in as its model provider (as tests/model's TestCodex runs it).
			standin := startStandin(t, filepath.Join(chaosbin.Root(), "tests", "model", "testdata", "codex.script.yaml"))
			home := t.TempDir()
			codexHome := filepath.Join(home, ".codex")
			config := "model = \"standin\"\nmodel_provider = \"standin\"\n\n[model_providers.standin]\n" +
				"name = \"chaos stand-in model\"\nbase_url = \"" + standin + "/v1\"\nwire_api = \"responses\"\nenv_key = \"STANDIN_API_KEY\"\n"
			if err := os.MkdirAll(codexHome, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o644); err != nil {
				t.Fatal(err)
			}
			checkAgentExample(t, append(withPath(env, codexBin), "HOME="+home, "CODEX_HOME="+codexHome, "STANDIN_API_KEY=standin"), line)
			return
		}
		// Without Codex the line is still read and planned up to its agent: the run must
		// stop at the missing program, exit 1, naming it.
		r := shellRun(t, workDir(t), withPath(env, ""), runTimeout, line)
		if r.Code != 1 || !strings.Contains(r.Stderr, "the agent's program codex is not on PATH") {
			t.Errorf("%s without codex installed: exit %d, want 1 naming codex\nstdout:\n%s\nstderr:\n%s", line, r.Code, r.Stdout, r.Stderr)
		}
		t.Skip("codex is not installed in tests/js: the README's Codex command was planned, not run (no Codex trial)")
	})
}

// checkAgentExample runs a README agent example in a folder of its own (workDir).
func checkAgentExample(t *testing.T, env []string, line string) {
	t.Helper()
	checkAgentExampleIn(t, workDir(t), env, line)
}

// exampleConditions are the two conditions of an agent example the test runs (all 19
// start a Node agent each: minutes on a loaded machine, for nothing these two do not show).
var exampleConditions = []string{"clean", "phantom_success@update_ticket"}

// checkAgentExampleIn runs a README agent example in dir, as printed but for --only with
// exampleConditions after its spec, where the stand-in plays a blind agent (reads, sets
// both fields, says done): the clean trial is correct, phantom_success on update_ticket
// silent_wrong (the agent reached the wall's tools and its closing message was read), and
// `chaos show` finds the run by the id it printed.
func checkAgentExampleIn(t *testing.T, dir string, env []string, line string) {
	t.Helper()
	fields := strings.Fields(strings.TrimPrefix(line, goRun))
	if len(fields) < 2 || fields[0] != "run" {
		t.Fatalf("%q is not a chaos run command line", line)
	}
	specArg := "run " + fields[1]
	only := ""
	for _, c := range exampleConditions {
		only += " --only " + c
	}
	narrowed := strings.Replace(line, specArg, specArg+only, 1)
	// The example's trials with Node agents: a bound for a starved machine.
	const exampleTimeout = 20 * time.Minute
	r := shellRun(t, dir, env, exampleTimeout, narrowed)
	r.MustSucceed(t, narrowed)
	id := runIDOf(t, r.Stdout)
	name := strings.TrimSuffix(filepath.Base(fields[1]), ".yaml")
	folder := filepath.Join(dir, "chaos-runs", name, id)
	var results []run.TrialResult
	testkit.ReadJSON(t, filepath.Join(folder, "verdicts.json"), &results)
	if len(results) != len(exampleConditions) {
		t.Errorf("%d trials in verdicts.json, want %d (%v)", len(results), len(exampleConditions), exampleConditions)
	}
	got := map[string]run.TrialResult{}
	for _, res := range results {
		got[res.Condition] = res
		if res.Unreached != "" {
			t.Errorf("trial %s: the agent did not reach the wall (%s): %s", res.ID, res.Unreached, res.UnreachedWhy)
		}
	}
	for cond, want := range map[string]string{exampleConditions[0]: "correct", exampleConditions[1]: "silent_wrong"} {
		if res := got[cond]; res.Verdict != want {
			t.Errorf("%s: verdict %q (%s), want %s\n%s", cond, res.Verdict, res.Reason, want, r.Stdout)
		}
	}
	show := testkit.RunIn(t, dir, chaosBin, env, runTimeout, "show", id)
	show.MustSucceed(t, "chaos show "+id)
}

// workDir is a user's folder with the repository's examples/ in it, so that the README's
// relative paths resolve and the runs land in the test's folder.
func workDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(chaosbin.Root(), "examples")
	if err := os.MkdirAll(filepath.Join(dir, "examples"), 0o755); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(src, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples in %s: %v", src, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "examples", filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// withPath is env with bin ahead on PATH ("" leaves PATH as it is).
func withPath(env []string, bin string) []string {
	out := make([]string, 0, len(env)+1)
	path := os.Getenv("PATH")
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
			continue
		}
		out = append(out, kv)
	}
	if bin != "" {
		path = bin + string(os.PathListSeparator) + path
	}
	return append(out, "PATH="+path)
}

var standinLine = regexp.MustCompile(`(?ms)^stand-in model: (http://\S+)$.*^ready; Ctrl-C stops$`)

// startStandin runs `chaos model standin --script FILE` and returns its URL once it is
// ready; the test's cleanup stops it.
func startStandin(t testing.TB, script string) string {
	t.Helper()
	p := testkit.Start(t, chaosBin, nil, "model", "standin", "--script", script, "--listen", "127.0.0.1:0")
	return p.WaitStdout(t, standinLine, testkit.StartTimeout)[1]
}
