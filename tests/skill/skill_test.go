// Package skill tests chaos skill test end to end: Claude Code from npm (tests/js),
// offline against the stand-in model, which scripts a skill's calls to a real MCP server
// from npm (@modelcontextprotocol/server-filesystem), with the skill in a home of its own
// and the server in the project's .mcp.json; every run is a real chaos run on the
// embedded Temporal server.
package skill

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/tests/chaosbin"
	"github.com/crashwall/chaos/tests/testkit"
)

var (
	repoRoot = chaosbin.Root()
	chaosBin string
)

// runTimeout is a guard against a hang, not a measure: a skill test is a clean run and
// a chaos run of about ten claude -p trials, minutes on a loaded machine.
const runTimeout = 15 * time.Minute

func TestMain(m *testing.M) {
	os.Exit(testkit.Main(m, "tests/skill", func(bin string) { chaosBin = bin }))
}

// write writes text to path, making its folder first.
func write(t *testing.T, path, text string) { testkit.WriteFile(t, path, text) }

// The input every trial gets fresh, and what the skill makes of it.
const (
	pristine = "buy milk\n"
	done     = "buy milk [done]\n"
)

// The skill's calls, as the stand-in model scripts them. Claude Code names the wall's
// tools mcp__chaos__TOOL.
const (
	// blind reads todo.txt, writes it and says done without reading back.
	blind = `- when: start
  tool: mcp__chaos__read_text_file
  arguments: {path: todo.txt}
- tool: mcp__chaos__write_file
  arguments: {path: todo.txt, content: "buy milk [done]\n"}
- text: Done. The first item of todo.txt is marked done.
`
	// verifying reads back after its write and writes again (a retry that is harmless
	// when the first write landed), reads back once more and only then says done.
	verifying = `- when: start
  tool: mcp__chaos__read_text_file
  arguments: {path: todo.txt}
- tool: mcp__chaos__write_file
  arguments: {path: todo.txt, content: "buy milk [done]\n"}
- tool: mcp__chaos__read_text_file
  arguments: {path: todo.txt}
- tool: mcp__chaos__write_file
  arguments: {path: todo.txt, content: "buy milk [done]\n"}
- tool: mcp__chaos__read_text_file
  arguments: {path: todo.txt}
- text: Done. todo.txt reads back with its first item marked done.
`
)

// machine is a home with the skill "todo" (allowed-tools: the fs server), a project whose
// .mcp.json runs server-filesystem on its working folder (each trial's sandbox), and
// todo.txt, the input.
func machine(t *testing.T) (env []string, project string) {
	t.Helper()
	env, tmp := testkit.EnvDir(t)
	home := filepath.Join(tmp, "home")
	project = filepath.Join(tmp, "project")
	fs := filepath.Join(testkit.JSDir(), "node_modules", ".bin", "mcp-server-filesystem")
	if _, err := os.Stat(fs); err != nil {
		t.Fatalf("server-filesystem is not installed in tests/js (npm ci --prefix tests/js): %v", err)
	}
	write(t, filepath.Join(home, ".claude", "skills", "todo", "SKILL.md"), "---\nname: todo\ndescription: Marks the first item of todo.txt as done.\nallowed-tools: mcp__fs\n---\nRead todo.txt with the fs server, add \" [done]\" to its first line and write it back.\n")
	write(t, filepath.Join(project, ".mcp.json"), `{"mcpServers": {"fs": {"command": "`+fs+`", "args": ["."]}}}`)
	write(t, filepath.Join(project, "todo.txt"), pristine)
	// Claude Code with a home of its own (no login, no settings of the machine's user).
	return append(env, "HOME="+home, "ANTHROPIC_API_KEY=sk-ant-standin", "DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"), project
}

func claude(t *testing.T) string {
	t.Helper()
	p := filepath.Join(testkit.JSDir(), "node_modules", ".bin", "claude")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("claude is not installed in tests/js (npm ci --prefix tests/js): %v", err)
	}
	return p
}

var standinLine = regexp.MustCompile(`(?m)^stand-in model: (http://\S+)$`)

// standin runs the stand-in model on script and returns its URL.
func standin(t *testing.T, script string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "script.yaml")
	write(t, path, script)
	p := testkit.Start(t, chaosBin, nil, "model", "standin", "--script", path, "--listen", "127.0.0.1:0")
	url := p.WaitStdout(t, standinLine, testkit.StartTimeout)[1]
	p.WaitStdout(t, regexp.MustCompile(`(?m)^ready; Ctrl-C stops$`), testkit.StartTimeout)
	return url
}

// skillTest runs chaos skill test todo in the project with the script's stand-in as the
// model, and returns the result and the run folder it wrote.
func skillTest(t *testing.T, env []string, project, script string, args ...string) (testkit.Result, string) {
	t.Helper()
	url := standin(t, script)
	env = append(slices.Clone(env), "ANTHROPIC_BASE_URL="+url)
	args = slices.Concat([]string{"skill", "test", "todo", "--prompt", "Mark the first item of todo.txt as done.",
		"--allow-real-calls", "--with", "todo.txt", "--claude", claude(t)}, args)
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, "{standin}", url)
	}
	r := testkit.RunIn(t, project, chaosBin, env, runTimeout, args...)
	runs, _ := filepath.Glob(filepath.Join(project, "chaos-skill-tests", "todo", "runs", "*", "verdicts.json"))
	if len(runs) != 1 {
		return r, ""
	}
	return r, filepath.Dir(runs[0])
}

func results(t *testing.T, dir string) map[string][]run.TrialResult {
	t.Helper()
	var rs []run.TrialResult
	testkit.ReadJSON(t, filepath.Join(dir, "verdicts.json"), &rs)
	out := map[string][]run.TrialResult{}
	for _, r := range rs {
		out[r.Condition] = append(out[r.Condition], r)
	}
	return out
}

// planned is the conditions the plan printed, clean first.
func planned(stdout string) []string {
	var out []string
	in := false
	for _, line := range strings.Split(stdout, "\n") {
		switch {
		case line == "conditions:":
			in = true
		case in && strings.HasPrefix(line, "  not planned:"):
		case in && strings.HasPrefix(line, "  "):
			out = append(out, strings.Fields(line)[0])
		default:
			in = false
		}
	}
	return out
}

func TestSkillList(t *testing.T) {
	env, project := machine(t)
	r := testkit.RunIn(t, project, chaosBin, env, time.Minute, "skill", "list", "--json")
	r.MustSucceed(t, "chaos skill list")
	var found struct {
		Skills []struct {
			Name    string   `json:"name"`
			Servers []string `json:"servers"`
		} `json:"skills"`
		Servers []struct {
			Name, Scope, Type string
			Args              []string
		} `json:"servers"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &found); err != nil {
		t.Fatalf("%v\n%s", err, r.Stdout)
	}
	if len(found.Skills) != 1 || found.Skills[0].Name != "todo" || !slices.Equal(found.Skills[0].Servers, []string{"fs"}) {
		t.Errorf("skills %+v, want todo using fs", found.Skills)
	}
	if len(found.Servers) != 1 || found.Servers[0].Name != "fs" || found.Servers[0].Scope != "project" || found.Servers[0].Type != "stdio" {
		t.Errorf("servers %+v, want fs (project, stdio)", found.Servers)
	}
}

// TestSkillTestRefusals: no --allow-real-calls, and no terminal without --yes, start
// nothing and say how to go on.
func TestSkillTestRefusals(t *testing.T) {
	env, project := machine(t)
	r := testkit.RunIn(t, project, chaosBin, env, time.Minute, "skill", "test", "todo", "--prompt", "x")
	if r.Code != 1 || !strings.Contains(r.Stderr, "pass --allow-real-calls") {
		t.Errorf("without --allow-real-calls: exit %d, want 1 and the flag named\n%s", r.Code, r.Stderr)
	}
	r = testkit.RunIn(t, project, chaosBin, env, time.Minute, "skill", "test", "nosuch", "--prompt", "x", "--allow-real-calls")
	if r.Code != 1 || !strings.Contains(r.Stderr, `no skill "nosuch" (the skills are: todo)`) {
		t.Errorf("an unknown skill: exit %d, want 1 and the skills listed\n%s", r.Code, r.Stderr)
	}
	// The clean run happens (it is what the plan is made from), then the question, which
	// cannot be asked: nothing more runs.
	r, dir := skillTest(t, env, project, blind)
	if r.Code != 1 || !strings.Contains(r.Stderr, "there is no terminal to ask on") || !strings.Contains(r.Stderr, "pass --yes") {
		t.Errorf("no terminal, no --yes: exit %d, want 1 and --yes named\n%s", r.Code, r.Stderr)
	}
	if dir != "" || !strings.Contains(r.Stdout, "phantom_success@write_file") {
		t.Errorf("want the plan shown and no run started (run folder %q)\n%s", dir, r.Stdout)
	}
}

// TestBlindSkill: a blind skill, twice per condition. The plan comes from the clean run's
// calls (one read, one write: no session drop), every condition runs, phantom success is
// silent_wrong, and todo.txt is pristine in every trial although every trial that wrote
// changed it.
func TestBlindSkill(t *testing.T) {
	env, project := machine(t)
	r, dir := skillTest(t, env, project, blind, "--yes", "--repeat", "2")
	r.MustSucceed(t, "chaos skill test")
	want := []string{"clean",
		"truncated_reply@read_text_file", "premature_read@read_text_file", "stale_read@read_text_file",
		"phantom_success@write_file", "transient_error@write_file", "permanent_error@write_file", "phantom_failure@write_file"}
	if got := planned(r.Stdout); !slices.Equal(got, want) {
		t.Fatalf("planned %v, want %v\n%s", got, want, r.Stdout)
	}
	if !strings.Contains(r.Stdout, "16 trials (8 conditions x 2)") {
		t.Errorf("the plan does not count 16 trials:\n%s", r.Stdout)
	}
	if !regexp.MustCompile(`estimated cost: \$[0-9.]+ \(16 trials at \$[0-9.]+, what the clean run cost`).MatchString(r.Stdout) {
		t.Errorf("no cost estimate from the clean run:\n%s", r.Stdout)
	}
	got := results(t, dir)
	for _, c := range want {
		if len(got[c]) != 2 {
			t.Errorf("%s: %d trials, want 2", c, len(got[c]))
		}
	}
	for _, tr := range got["phantom_success@write_file"] {
		if tr.Verdict != "silent_wrong" {
			t.Errorf("%s: %s (%s), want silent_wrong", tr.ID, tr.Verdict, tr.VerdictWhy)
		}
	}
	for _, tr := range got["clean"] {
		if tr.Verdict != "correct" {
			t.Errorf("%s: %s (%s), want correct", tr.ID, tr.Verdict, tr.VerdictWhy)
		}
	}
	var manifest struct {
		AgentCommand string `json:"agent_command"`
	}
	testkit.ReadJSON(t, filepath.Join(dir, "manifest.json"), &manifest)
	if !strings.Contains(manifest.AgentCommand, "--model claude-sonnet-4-5-20250929") || !strings.Contains(manifest.AgentCommand, "--strict-mcp-config") {
		t.Errorf("the manifest's agent command %q does not pin the model and the wall as the only server", manifest.AgentCommand)
	}

	// --with: each trial read todo.txt pristine, and the trials whose write landed made
	// it "[done]": the next trial (the same condition's second among them) still read it
	// pristine.
	wrote, read := 0, 0
	for _, trials := range got {
		for _, tr := range trials {
			log, err := record.ReadFile(filepath.Join(tr.Dir, "record.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range log.Calls() {
				unfired := c.Hit == nil || !c.Hit.Fired
				switch {
				case c.Tool == "read_text_file" && unfired:
					read++
					if c.Reply != strings.TrimSuffix(pristine, "\n") && c.Reply != pristine {
						t.Errorf("%s: todo.txt read %q, want it pristine (%q)", tr.ID, c.Reply, pristine)
					}
				case c.Tool == "write_file" && unfired && !c.IsError:
					wrote++
				}
			}
		}
	}
	// 16 trials each read once; truncated_reply and premature_read (4 trials) hit that read,
	// stale_read never fires (no write before the read). The 2 clean trials and the 6 of
	// the read faults wrote for real, and a trial after each still read todo.txt pristine.
	if read != 12 || wrote != 8 {
		t.Errorf("%d pristine reads and %d writes that landed unfaulted, want 12 and 8", read, wrote)
	}
	for _, p := range []string{filepath.Join(project, "todo.txt"), filepath.Join(project, "chaos-skill-tests", "todo", "todo.txt")} {
		if b, _ := os.ReadFile(p); string(b) != pristine {
			t.Errorf("%s is %q, want it untouched (%q)", p, b, pristine)
		}
	}
}

// TestVerifyingSkill: a skill that reads back and writes again is correct under phantom
// success; its two writes plan a session drop. Its model calls go through the model
// proxy ({llm_url}), and Claude Code's own total_cost_usd is read beside the proxy's count.
func TestVerifyingSkill(t *testing.T) {
	env, project := machine(t)
	r, dir := skillTest(t, env, project, verifying, "--yes", "--model-upstream", "{standin}")
	r.MustSucceed(t, "chaos skill test")
	if got := planned(r.Stdout); !slices.Contains(got, "session_drop@write_file") || len(got) != 9 {
		t.Errorf("planned %v, want the 8 conditions of one read and one write tool and session_drop@write_file", got)
	}
	// One estimate, the skill test's: chaos run, with the model proxy in front, must not
	// print a second one of its own ("unknown": no earlier run of the spec).
	if lines := regexp.MustCompile(`(?m)^estimated cost: .*$`).FindAllString(r.Stdout, -1); len(lines) != 1 || !strings.Contains(lines[0], "total_cost_usd") {
		t.Errorf("estimate lines %q, want one, from the clean run's total_cost_usd", lines)
	}
	got := results(t, dir)
	for _, c := range []string{"clean", "phantom_success@write_file"} {
		if len(got[c]) != 1 || got[c][0].Verdict != "correct" {
			t.Errorf("%s: %+v, want one trial, correct", c, got[c])
		}
	}
	for c, trials := range got {
		for _, tr := range trials {
			k := tr.Cost
			switch {
			case k == nil:
				t.Errorf("%s: no cost recorded", c)
			case k.AgentUSD == nil || *k.AgentUSD <= 0:
				t.Errorf("%s: Claude Code's total_cost_usd was not read (agent_usd %v)", c, k.AgentUSD)
			case k.Calls < 2 || k.Input <= 0:
				t.Errorf("%s: the model proxy counted %d calls and %d input tokens, want Claude Code's calls through {llm_url}", c, k.Calls, k.Input)
			case math.Abs(*k.AgentUSD-k.USD) > 1e-6:
				// Claude Code prices the usage the stand-in declared as the proxy does.
				t.Errorf("%s: Claude Code says $%v, the proxy $%v, want the same", c, *k.AgentUSD, k.USD)
			}
		}
	}
}

// TestCheckOverrules: a check that calls the world right only when todo.txt is untouched
// overrules the record both ways: the clean trial (it wrote) becomes silent_wrong, phantom
// success (its write swallowed) becomes correct, and result.json says so.
func TestCheckOverrules(t *testing.T) {
	env, project := machine(t)
	check := `if grep -q '\[done\]' todo.txt; then echo '{"problems": ["todo.txt was changed"]}'; else echo '{"problems": []}'; fi`
	r, dir := skillTest(t, env, project, blind, "--yes", "--check", check)
	r.MustSucceed(t, "chaos skill test")
	got := results(t, dir)
	for _, c := range []struct {
		cond, verdict string
		worldOK       bool
	}{{"clean", "silent_wrong", false}, {"phantom_success@write_file", "correct", true}} {
		if len(got[c.cond]) != 1 {
			t.Fatalf("%s: %d trials, want 1", c.cond, len(got[c.cond]))
		}
		tr := got[c.cond][0]
		o := tr.Overrule
		if tr.Verdict != c.verdict || o == nil || !o.Overruled || o.WorldOK != c.worldOK || o.Others == nil || *o.Others == c.worldOK {
			t.Errorf("%s: verdict %s, overrule %+v; want %s, the check's world_ok %v over the others'", c.cond, tr.Verdict, o, c.verdict, c.worldOK)
		}
		if !strings.Contains(tr.VerdictWhy, "overruled the others") {
			t.Errorf("%s: verdict_why %q does not say the check overruled", c.cond, tr.VerdictWhy)
		}
	}
}
