package hostile_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/tests/testkit"
)

// canarySpec is a spec with a command that would create a canary file in every place a
// spec has one (agent, operator.resume, a server, a command check) and a model upstream:
// planning must start none of them, and the plan must show each.
func canarySpec(canary string) string {
	touch := func(what string) string { return "touch " + canary + "-" + what }
	return "name: canaries\ntask: refund order 42\n" +
		"tools: [{name: note, effect: write}]\n" +
		"agent:\n  command: " + yamlQuote(touch("agent")+" {task}") + "\n  timeout: 30s\n" +
		"operator:\n  resume: " + yamlQuote(touch("resume")+" {operator_message}") + "\n  rules: [{reply: go on}]\n" +
		"servers:\n  - name: crm\n    command: sh\n    args: ['-c', " + yamlQuote(touch("server")) + "]\n" +
		"probes:\n  - command: " + yamlQuote(touch("check")) + "\n" +
		"model:\n  upstream: http://127.0.0.1:9/where-the-model-goes/v1\n"
}

// TestHostileMCPPlan (issue 28 item 5): an agent driving chaos mcp gets nothing started
// and reads nothing outside --dir before the person confirms: plan_run starts none of the
// spec's commands, and its plan names every one of them and where the model's calls go;
// a spec outside --dir, by path or through a link, is refused unread.
func TestHostileMCPPlan(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	canary := filepath.Join(w.outside, "ran")
	os.WriteFile(filepath.Join(w.specDir, "canaries.yaml"), []byte(canarySpec(canary)), 0o644)
	// A spec outside --dir whose server would leave a canary if it were planned.
	outsideSpec := filepath.Join(w.tmp, "elsewhere.yaml")
	os.WriteFile(outsideSpec, []byte(canarySpec(canary+"-outside")), 0o644)
	os.Symlink(outsideSpec, filepath.Join(w.specDir, "link.yaml"))
	os.Symlink(w.tmp, filepath.Join(w.specDir, "up"))

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cs := testkit.MCPClient(t, ctx, "hostile", chaosBin, w.env, "mcp", "--dir", w.specDir)
	var plan struct{ Plan, Confirmation string }
	if msg := testkit.CallTool(t, ctx, cs, "plan_run", map[string]any{"spec": "canaries.yaml"}, &plan); msg != "" {
		t.Fatalf("plan_run: %s", msg)
	}
	t.Logf("the plan:\n%s", plan.Plan)
	for _, want := range []string{
		"agent (every trial, on this machine, as you): sh -c 'touch " + canary + "-agent {task}'",
		"operator.resume (after the agent ends, up to 1 times): sh -c 'touch " + canary + "-resume {operator_message}'",
		"server crm (started with the run and every trial, on this machine): sh -c 'touch " + canary + "-server'",
		"command check (after every trial, in its sandbox, on this machine): sh -c 'touch " + canary + "-check'",
		"model: the agent's model calls ({llm_url}) go through chaos's proxy to http://127.0.0.1:9/where-the-model-goes/v1",
	} {
		if !strings.Contains(plan.Plan, want) {
			t.Errorf("the plan does not show %q", want)
		}
	}
	if plan.Confirmation == "" {
		t.Error("the plan has no confirmation")
	}
	for _, c := range []struct{ name, spec, want string }{
		{"an absolute path outside --dir", outsideSpec, "refused: " + outsideSpec + " is outside chaos mcp's folder " + w.specDir},
		{"a link out of --dir", "link.yaml", "refused: link.yaml is outside chaos mcp's folder " + w.specDir + " (it leads to " + outsideSpec + ")"},
		{"a folder link out of --dir", "up/elsewhere.yaml", "refused: up/elsewhere.yaml is outside chaos mcp's folder"},
		{"..", "../elsewhere.yaml", "refused: ../elsewhere.yaml is outside chaos mcp's folder"},
	} {
		if msg := testkit.CallTool(t, ctx, cs, "plan_run", map[string]any{"spec": c.spec}, nil); !strings.Contains(msg, c.want) {
			t.Errorf("plan_run %s: %q, want %q", c.name, msg, c.want)
		}
	}
	if msg := testkit.CallTool(t, ctx, cs, "list_specs", map[string]any{"dir": "up"}, nil); !strings.Contains(msg, "refused: up is outside chaos mcp's folder") {
		t.Errorf("list_specs in a link out of --dir: %q, want a refusal", msg)
	}
	var specs struct{ Specs []struct{ Path string } }
	if msg := testkit.CallTool(t, ctx, cs, "list_specs", nil, &specs); msg != "" || len(specs.Specs) != 1 || filepath.Base(specs.Specs[0].Path) != "canaries.yaml" {
		t.Errorf("list_specs: %s %+v, want canaries.yaml alone (not the link out)", msg, specs)
	}
	cs.Close()
	w.check(t) // no canary in the folder outside: nothing ran
}
