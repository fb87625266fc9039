package activities

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/run"
)

// A whole trial through the real hub and the real reference agent:
// PrepareWorkspace -> StartHub -> RunAgent -> Verify -> Teardown.
func TestTrial(t *testing.T) {
	tests := []struct {
		name      string
		condition string
		agent     string
		worldOK   bool
		fired     bool
	}{
		{"clean over stdio", "clean", "--style blind --transport stdio --wall-command {wall}", true, false},
		{"clean over REST", "clean", "--style blind --transport rest --url {wall_url}", true, false},
		{"phantom success, blind agent", "phantom_success@update_ticket", "--style blind --transport stdio --wall-command {wall}", false, true},
		{"phantom success, verifying agent", "phantom_success@update_ticket", "--style verifying --transport stdio --wall-command {wall}", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, env := newActivities(t)
			command := chaosBin + " agent scripted " + tt.agent + " --spec {spec}"
			in := trialInput(t, exampleYAML(t), examplePath, tt.condition, command)

			ws := must[run.Workspace](t, env, a.PrepareWorkspace, in)
			hub := must[run.HubInfo](t, env, a.StartHub, run.AgentInput{Trial: in, Workspace: ws})
			res := must[run.AgentResult](t, env, a.RunAgent, run.AgentInput{Trial: in, Workspace: ws, Hub: hub})
			if res.Error != "" || res.ExitCode != 0 {
				stderr, _ := os.ReadFile(filepath.Join(ws.TrialDir, "stderr"))
				t.Fatalf("agent: %+v\ncommand: %s\nstderr:\n%s", res, hub.Command, stderr)
			}
			result := must[run.TrialResult](t, env, a.Verify, run.VerifyInput{Trial: in, Workspace: ws, Agent: &res})
			if _, err := env.ExecuteActivity(a.Teardown, run.TeardownInput{Trial: in, Workspace: ws, Reason: "agent exited"}); err != nil {
				t.Fatal(err)
			}

			if result.Outcome != run.OutcomeCompleted || result.WorldOK != tt.worldOK {
				t.Errorf("outcome %s, world ok %v; want completed, %v (checks %+v)", result.Outcome, result.WorldOK, tt.worldOK, result.Checks)
			}
			if len(result.Checks) != 2 {
				t.Errorf("checks: %+v; want the spec's two", result.Checks)
			}
			if (result.Fired > 0) != tt.fired || result.Calls == 0 || !result.SuccessPossible {
				t.Errorf("calls %d, fired %d, success possible %v", result.Calls, result.Fired, result.SuccessPossible)
			}
			if !strings.Contains(result.Closing, "STATUS:") {
				t.Errorf("closing message %q has no STATUS line", result.Closing)
			}
			if result.Claim != "" || result.Verdict != "" {
				t.Errorf("claim %q, verdict %q; the judge is not there yet", result.Claim, result.Verdict)
			}

			l, err := record.ReadFile(filepath.Join(ws.TrialDir, "record.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if last := l.Rows[len(l.Rows)-1]; last.Type != record.TypeSessionEnd || last.Reason != "agent exited" {
				t.Errorf("the record ends with %s %q; want session_end \"agent exited\"", last.Type, last.Reason)
			}
			var written run.TrialResult
			b, err := os.ReadFile(filepath.Join(ws.TrialDir, "result.json"))
			if err != nil || json.Unmarshal(b, &written) != nil || written.WorldOK != result.WorldOK {
				t.Errorf("result.json: %v %s", err, b)
			}
			if _, err := os.Stat(ws.Dir); !os.IsNotExist(err) {
				t.Errorf("the sandbox %s is still there after teardown", ws.Dir)
			}
			if a.live(in.Key()) != nil {
				t.Error("the hub is still kept after teardown")
			}
		})
	}
}

func TestStartHub(t *testing.T) {
	a, env := newActivities(t)
	in := trialInput(t, exampleYAML(t), examplePath, "clean", `agent --task {task} --config '{mcp_config}' --wall "{wall}" --sandbox {sandbox}`)
	in.Trial.Axes = map[string]string{"model": "small one"}
	in.AgentCommand += " --model {model}"
	ws := must[run.Workspace](t, env, a.PrepareWorkspace, in)
	t.Cleanup(func() { a.Teardown(t.Context(), run.TeardownInput{Trial: in, Workspace: ws}) })
	hub := must[run.HubInfo](t, env, a.StartHub, run.AgentInput{Trial: in, Workspace: ws})

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
	if c := cfg.MCPServers["chaos"]; c.Type != "stdio" || c.Command != chaosBin || strings.Join(c.Args, " ") != "wall --hub "+hub.URL {
		t.Errorf("mcp_config: %+v", cfg)
	}
	for token, want := range map[string]string{
		"wall":     chaosBin + " wall --hub " + hub.URL,
		"wall_url": hub.URL,
		"llm_url":  hub.URL + "/llm",
		"sandbox":  ws.Dir,
		"spec":     ws.SpecPath,
		"model":    "small one",
	} {
		if hub.Tokens[token] != want {
			t.Errorf("{%s} = %q; want %q", token, hub.Tokens[token], want)
		}
	}
	if !strings.HasPrefix(hub.Tokens["task"], "Read the customer's email") {
		t.Errorf("{task} = %q", hub.Tokens["task"])
	}
	if strings.Contains(hub.Command, "{") && !strings.Contains(hub.Command, `{"mcpServers"`) {
		t.Errorf("tokens left in the command: %s", hub.Command)
	}
	if !strings.Contains(hub.Command, `--wall "`+chaosBin+" wall --hub "+hub.URL+`"`) || !strings.Contains(hub.Command, "--model 'small one'") {
		t.Errorf("command: %s", hub.Command)
	}

	// A retried StartHub replaces the hub: the first one stops serving, and the record
	// holds one session.
	again := must[run.HubInfo](t, env, a.StartHub, run.AgentInput{Trial: in, Workspace: ws})
	if _, err := http.Get(hub.URL + "/healthz"); err == nil {
		t.Errorf("the replaced hub at %s still answers", hub.URL)
	}
	if again.URL == hub.URL {
		t.Errorf("the new hub has the old URL")
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
		{"no agent command", exampleYAML(t, "  command: chaos agent scripted --style verifying --transport stdio --wall-command {wall} --spec {spec}\n", ""), "clean", "", "the spec names no agent command; give one after -- (chaos run SPEC -- CMD)"},
		{"bad spec", []byte("name: x\n"), "clean", "agent", "task is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, env := newActivities(t)
			in := trialInput(t, exampleYAML(t), examplePath, "clean", tt.command)
			in.Spec.YAML = tt.yaml
			in.Trial.Condition = tt.condition
			ws := run.Workspace{TrialDir: t.TempDir(), Dir: t.TempDir()}
			_, err := execute[run.HubInfo](t, env, a.StartHub, run.AgentInput{Trial: in, Workspace: ws})
			wantBadInput(t, err, tt.want)
			if a.live(in.Key()) != nil {
				t.Error("a hub was kept after a failed start")
			}
		})
	}
}
