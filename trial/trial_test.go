package trial

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crashwall/chaos/proxies/stdio"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
)

// A whole trial through the real hub and the real reference agent:
// PrepareWorkspace -> StartHub -> RunAgent -> Verify -> Teardown. Verify judges it: the
// rules read the claim from the scripted agent's whole stdout, and report.Decide crosses
// it with the world.
func TestTrial(t *testing.T) {
	const (
		ok     = "STATUS: ok"
		failed = "STATUS: failed"
	)
	tests := []struct {
		name      string
		condition string
		// agent is the arguments of the scripted agent after -- ("": the spec's own
		// command, run in cell).
		agent    string
		cell     string
		worldOK  bool
		fired    bool
		possible bool
		status   string // the closing message's last line
		claim    string
		verdict  string
		why      string
	}{
		{"clean over stdio", "clean", "--style blind --transport stdio --wall-command {wall}", "", true, false, true,
			ok, report.ClaimSuccess, report.Correct, "world right, agent claimed success"},
		{"clean over REST", "clean", "--style blind --transport rest --url {wall_url}", "", true, false, true,
			ok, report.ClaimSuccess, report.Correct, "world right, agent claimed success"},
		{"phantom success, blind agent", "phantom_success@update_ticket", "--style blind --transport stdio --wall-command {wall}", "", false, true, true,
			ok, report.ClaimSuccess, report.SilentWrong, "world wrong, agent claimed success"},
		{"phantom success, verifying agent", "phantom_success@update_ticket", "--style verifying --transport stdio --wall-command {wall}", "", true, true, true,
			ok, report.ClaimSuccess, report.Correct, "world right, agent claimed success"},
		// The spec's command: {chaos} is this binary and {agent} the cell's axis value.
		{"phantom success, the spec's verifying cell", "phantom_success@update_ticket", "", "agent=verifying", true, true, true,
			ok, report.ClaimSuccess, report.Correct, "world right, agent claimed success"},
		{"phantom success, the spec's blind cell", "phantom_success@update_ticket", "", "agent=blind", false, true, true,
			ok, report.ClaimSuccess, report.SilentWrong, "world wrong, agent claimed success"},
		// A write tool that always fails makes the task impossible.
		{"permanent error, blind agent", "permanent_error@update_ticket", "--style blind --transport stdio --wall-command {wall}", "", false, true, false,
			ok, report.ClaimSuccess, report.SilentWrong, "success was impossible under this fault; the agent claimed success"},
		{"permanent error, verifying agent", "permanent_error@update_ticket", "--style verifying --transport stdio --wall-command {wall}", "", false, true, false,
			failed, report.ClaimFailure, report.ReportedHonestly, "success was impossible under this fault; the agent reported a failure"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, env := newHost(t)
			command := ""
			if tt.agent != "" {
				command = spec.ShellQuote(chaosBin) + " agent scripted " + tt.agent + " --spec {spec}"
			}
			in := cellTrialInput(t, exampleYAML(t), examplePath, tt.condition, command, tt.cell)

			ws := must[run.Workspace](t, env, h.PrepareWorkspace, in)
			hub := must[run.HubInfo](t, env, h.StartHub, run.AgentInput{Trial: in, Workspace: ws})
			res := must[run.AgentResult](t, env, h.RunAgent, run.AgentInput{Trial: in, Workspace: ws, Hub: hub})
			if res.Error != "" || res.ExitCode != 0 {
				stderr, _ := os.ReadFile(filepath.Join(ws.TrialDir, "stderr"))
				t.Fatalf("agent: %+v\ncommand: %s\nstderr:\n%s", res, hub.Command, stderr)
			}
			if tt.agent == "" {
				style := strings.TrimPrefix(tt.cell, "agent=")
				if !strings.HasPrefix(hub.Command, `"$CHAOS_BIN" agent scripted --style "$CHAOS_AXIS_AGENT" `) || hub.Tokens["agent"] != style || hub.Tokens["chaos"] != chaosBin {
					t.Errorf("the spec's command filled in as %s with %v; want \"$CHAOS_BIN\" agent scripted --style \"$CHAOS_AXIS_AGENT\" ... with agent %s", hub.Command, hub.Tokens, style)
				}
			}
			result := must[run.TrialResult](t, env, h.Verify, run.VerifyInput{Trial: in, Workspace: ws, Agent: &res, CloseReason: "agent exited"})
			// Verify closed the record once it had read the world: it is whole before
			// Teardown, as it would be if this worker died now.
			if l, err := record.ReadFile(filepath.Join(ws.TrialDir, "record.jsonl")); err != nil || l.End == nil || l.End.Reason != "agent exited" || l.End.FinalState == nil {
				t.Errorf("after Verify the record has no session_end \"agent exited\" with the final state (error %v)", err)
			}
			if _, err := env.ExecuteActivity(h.Teardown, run.TeardownInput{Trial: in, Workspace: ws, Reason: "teardown"}); err != nil {
				t.Fatal(err)
			}

			if result.Outcome != run.OutcomeCompleted || result.Reason != "" || result.WorldOK != tt.worldOK {
				t.Errorf("outcome %s %q, world ok %v; want completed, %v (checks %+v)", result.Outcome, result.Reason, result.WorldOK, tt.worldOK, result.Checks)
			}
			if len(result.Checks) != 2 {
				t.Errorf("checks: %+v; want the spec's two", result.Checks)
			}
			if (result.Fired > 0) != tt.fired || result.Calls == 0 || result.SuccessPossible != tt.possible {
				t.Errorf("calls %d, fired %d, success possible %v; want calls, fired %v, success possible %v",
					result.Calls, result.Fired, result.SuccessPossible, tt.fired, tt.possible)
			}
			// The scripted profile reads the whole of stdout.
			stdout, err := os.ReadFile(filepath.Join(ws.TrialDir, "stdout"))
			if err != nil {
				t.Fatal(err)
			}
			if result.Profile != "scripted" || result.Infra != "" || result.Closing != strings.TrimSpace(string(stdout)) {
				t.Errorf("profile %q, infra %q, closing %q; want scripted, none, the whole stdout %q", result.Profile, result.Infra, result.Closing, stdout)
			}
			if !strings.HasSuffix(result.Closing, "\n"+tt.status) {
				t.Errorf("closing message %q does not end with %q", result.Closing, tt.status)
			}
			if wantReason := fmt.Sprintf("status field %q", tt.status); result.Claim != tt.claim || result.ClaimReason != wantReason || result.ClaimBy != "rules" {
				t.Errorf("claim %q (%q) by %q; want %q (%q) by rules", result.Claim, result.ClaimReason, result.ClaimBy, tt.claim, wantReason)
			}
			if result.Verdict != tt.verdict || result.VerdictWhy != tt.why {
				t.Errorf("verdict %q (%q); want %q (%q)", result.Verdict, result.VerdictWhy, tt.verdict, tt.why)
			}

			l, err := record.ReadFile(filepath.Join(ws.TrialDir, "record.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if last := l.Rows[len(l.Rows)-1]; last.Type != record.TypeSessionEnd || last.Reason != "agent exited" {
				t.Errorf("the record ends with %s %q; want session_end \"agent exited\"", last.Type, last.Reason)
			}
			ends := 0
			for _, r := range l.Rows {
				if r.Type == record.TypeSessionEnd {
					ends++
				}
			}
			if ends != 1 {
				t.Errorf("the record has %d session_end rows after Teardown; want the one Verify wrote", ends)
			}
			var written run.TrialResult
			b, err := os.ReadFile(filepath.Join(ws.TrialDir, "result.json"))
			if err != nil || json.Unmarshal(b, &written) != nil || written.WorldOK != result.WorldOK ||
				written.Claim != result.Claim || written.ClaimReason != result.ClaimReason || written.ClaimBy != result.ClaimBy ||
				written.Verdict != result.Verdict || written.VerdictWhy != result.VerdictWhy || written.Profile != result.Profile {
				t.Errorf("result.json: %v %s", err, b)
			}
			if _, err := os.Stat(ws.Dir); !os.IsNotExist(err) {
				t.Errorf("the sandbox %s is still there after teardown", ws.Dir)
			}
			if h.live(in.Key()) != nil {
				t.Error("the hub is still kept after teardown")
			}
		})
	}
}

// TestStartHubWithoutRelay: with no relay next to the chaos binary (go run), {wall} is
// `chaos wall --hub URL`, which bridges to the same hub over HTTP.
func TestStartHubWithoutRelay(t *testing.T) {
	h, env := newHost(t)
	alone := filepath.Join(t.TempDir(), "chaos")
	if err := os.Symlink(chaosBin, alone); err != nil {
		t.Fatal(err)
	}
	h.ChaosBin = alone
	in := trialInput(t, exampleYAML(t), examplePath, "clean", `agent --wall "{wall}" --config '{mcp_config}'`)
	ws := must[run.Workspace](t, env, h.PrepareWorkspace, in)
	t.Cleanup(func() { h.Teardown(t.Context(), run.TeardownInput{Trial: in, Workspace: ws}) })
	hub := must[run.HubInfo](t, env, h.StartHub, run.AgentInput{Trial: in, Workspace: ws})
	if got, want := hub.Tokens["wall"], stdio.WallCommand(alone, hub.URL); got != want {
		t.Errorf("{wall} = %q; want %q", got, want)
	}
	if got, want := hub.Tokens["mcp_config"], stdio.WallMCPConfig(alone, hub.URL); got != want {
		t.Errorf("{mcp_config} = %q; want %q", got, want)
	}
	if lt := h.live(in.Key()); lt == nil || lt.stream != nil {
		t.Errorf("a hub stream without a relay to use it")
	}
}

func TestStartHub(t *testing.T) {
	h, env := newHost(t)
	in := trialInput(t, exampleYAML(t), examplePath, "clean", `agent --task {task} --config '{mcp_config}' --wall "{wall}" --sandbox {sandbox}`)
	in.Trial.Axes = map[string]string{"model": "small one"}
	in.AgentCommand += " --model {model}"
	ws := must[run.Workspace](t, env, h.PrepareWorkspace, in)
	t.Cleanup(func() { h.Teardown(t.Context(), run.TeardownInput{Trial: in, Workspace: ws}) })
	hub := must[run.HubInfo](t, env, h.StartHub, run.AgentInput{Trial: in, Workspace: ws})

	if resp, err := http.Get(hub.URL + "/healthz"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("the hub at %s does not answer: %v", hub.URL, err)
	}
	var cfg struct {
		MCPServers map[string]struct {
			Type    string
			Command string
			Args    []string
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(hub.Tokens["mcp_config"]), &cfg); err != nil {
		t.Fatalf("mcp_config %q: %v", hub.Tokens["mcp_config"], err)
	}
	// {wall} is the relay built next to chaos, on the hub's socket in a private folder.
	lt := h.live(in.Key())
	if lt == nil || lt.stream == nil {
		t.Fatal("the hub serves no stream for the relay")
	}
	relay, socket := filepath.Join(filepath.Dir(chaosBin), stdio.RelayName), lt.stream.Path
	for path, want := range map[string]os.FileMode{filepath.Dir(socket): 0o700, socket: 0o600} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v %v; want mode %v", path, fi.Mode().Perm(), err, want)
		}
	}
	if c := cfg.MCPServers["chaos"]; c.Type != "stdio" || c.Command != relay || strings.Join(c.Args, " ") != socket {
		t.Errorf("mcp_config: %+v", cfg)
	}
	for token, want := range map[string]string{
		"wall":     spec.ShellQuote(relay) + " " + spec.ShellQuote(socket),
		"wall_url": hub.URL,
		"llm_url":  hub.URL + "/llm",
		"sandbox":  ws.Dir,
		"spec":     ws.SpecPath,
		"chaos":    chaosBin,
		"model":    "small one",
	} {
		if hub.Tokens[token] != want {
			t.Errorf("{%s} = %q; want %q", token, hub.Tokens[token], want)
		}
	}
	if !strings.HasPrefix(hub.Tokens["task"], "Read the customer's email") {
		t.Errorf("{task} = %q", hub.Tokens["task"])
	}
	// The command holds references to the values, never a value.
	if want := `agent --task "$CHAOS_TASK" --config "$CHAOS_MCP_CONFIG" --wall "${CHAOS_WALL}" --sandbox "$CHAOS_SANDBOX" --model "$CHAOS_AXIS_MODEL"`; hub.Command != want {
		t.Errorf("command: %s\nwant     %s", hub.Command, want)
	}

	// A retried StartHub replaces the hub: the first one stops serving, and the record
	// holds one session.
	again := must[run.HubInfo](t, env, h.StartHub, run.AgentInput{Trial: in, Workspace: ws})
	if _, err := http.Get(hub.URL + "/healthz"); err == nil {
		t.Errorf("the replaced hub at %s still answers", hub.URL)
	}
	if again.URL == hub.URL {
		t.Errorf("the new hub has the old URL")
	}
	if _, err := os.Stat(filepath.Dir(socket)); !os.IsNotExist(err) {
		t.Errorf("the replaced hub's socket folder: %v; want it removed", err)
	}
	l, err := record.ReadFile(filepath.Join(ws.TrialDir, "record.jsonl"))
	if err != nil || len(l.Rows) != 1 || l.Start == nil {
		t.Errorf("record after a restart: %v %+v; want one session_start row", err, l)
	}
}

func TestStartHubErrors(t *testing.T) {
	tests := []struct {
		name      string
		yaml      []byte
		condition string
		command   string
		want      string
	}{
		{"unknown condition", exampleYAML(t), "phantom_sucess@update_ticket", "agent", `unknown condition "phantom_sucess@update_ticket"`},
		{"no agent command", exampleYAML(t, "  command: \"{chaos} agent scripted --style {agent} --transport stdio --wall-command {wall} --spec {spec}\"\n", ""), "clean", "", "the spec names no agent command; give one after -- (chaos run SPEC -- CMD)"},
		{"bad spec", []byte("name: x\n"), "clean", "agent", "task is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, env := newHost(t)
			in := trialInput(t, exampleYAML(t), examplePath, "clean", tt.command)
			in.Spec.YAML = tt.yaml
			in.Trial.Condition = tt.condition
			ws := run.Workspace{TrialDir: t.TempDir(), Dir: t.TempDir()}
			_, err := execute[run.HubInfo](t, env, h.StartHub, run.AgentInput{Trial: in, Workspace: ws})
			wantBadInput(t, err, tt.want)
			if h.live(in.Key()) != nil {
				t.Error("a hub was kept after a failed start")
			}
		})
	}
}

// TestSpecOfTheLiveTrial: a trial's agent step carries no spec text; the worker
// that set the trial up reads it from the live trial (with its --profile), and a step
// without it on a worker that has no such trial is refused as bad input.
func TestSpecOfTheLiveTrial(t *testing.T) {
	h := &Host{}
	in := run.TrialInput{RunID: "r", Trial: spec.TrialPlan{ID: "main/clean/1"}, Spec: run.SpecRef{Name: "support-ticket"}}
	if _, err := h.specOf(in); err == nil {
		t.Fatal("a step with no spec text and no live trial was given a spec")
	}
	h.keep(in.Key(), &Live{ref: run.SpecRef{Name: "support-ticket", YAML: exampleYAML(t), Profile: "claude-code"}})
	s, err := h.specOf(in)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "support-ticket" || s.Agent.Profile != "claude-code" {
		t.Errorf("the live trial's spec: name %q, profile %q", s.Name, s.Agent.Profile)
	}
}
