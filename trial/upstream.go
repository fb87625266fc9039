package trial

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/crashwall/chaos/probes"
	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/proxies/upstream"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
)

// openUpstream reaches the spec's real servers for a trial whose sandbox is dir; nil
// when the spec has none. A server that cannot be reached is an error naming it.
func openUpstream(ctx context.Context, s *spec.Spec, dir string) (*upstream.Upstream, error) {
	if len(s.Servers) == 0 {
		return nil, nil
	}
	up, err := upstream.OpenUpstream(ctx, upstream.UpstreamConfig{Spec: s, Sandbox: dir})
	if err != nil {
		return nil, fmt.Errorf("reach the real servers: %w", err)
	}
	return up, nil
}

// toolSource is up as the hub's source (nil, the simulated world, when there is none).
func toolSource(up *upstream.Upstream) hub.ToolSource {
	if up == nil {
		return nil
	}
	return up
}

// defaultProbeTimeout bounds a command check that names no timeout.
const defaultProbeTimeout = time.Minute

// realEvidence is the real world's evidence: the task's probes and, with real servers
// behind the wall, what the record says of them (checkReal).
type realEvidence struct{}

func (realEvidence) part() string { return "real world" }

func (realEvidence) world(ctx context.Context, v *verification) {
	v.worldUnknown(v.host.checkReal(ctx, v.spec, v.task, v.live, v.log, v.in.Workspace, &v.res))
}

// checkReal reads the real world after a trial: the task's probes (an mcp probe calls
// the server directly, through the trial's own connection when the hub is still up; a
// command check gets the servers' config as CHAOS_MCP_CONFIG) and, with real servers
// behind the wall, the writes the wall swallowed, from the record. It adds to res.Checks
// and res.WorldOK, and returns why there is no verdict ("" when there is one).
func (h *Host) checkReal(ctx context.Context, s *spec.Spec, task spec.Task, lt *Live, log *record.Log, ws run.Workspace, res *run.TrialResult) string {
	if why := upstream.UpstreamFailure(log); why != "" {
		return why
	}
	var caller probes.MCPCaller
	for _, p := range task.Probes {
		if p.Kind != "mcp" || caller != nil {
			continue
		}
		if lt != nil {
			caller, _ = lt.hub.Source().(probes.MCPCaller)
		}
		if caller == nil {
			up, err := openUpstream(ctx, s, ws.Dir)
			if err != nil {
				return "the probes cannot reach the servers: " + err.Error()
			}
			if up != nil {
				defer up.Close()
				caller = up
			}
		}
	}
	why := ""
	others, otherChecks := res.WorldOK, len(res.Checks)
	var overrule *run.Overrule
	for _, p := range task.Probes {
		var r probes.Result
		switch p.Kind {
		case "mcp":
			r = probes.MCPCheck(ctx, caller, fillProbe(p, ws.Dir))
		case "command":
			timeout := time.Duration(p.Timeout)
			if timeout <= 0 {
				timeout = defaultProbeTimeout
			}
			env := []string{"CHAOS_MCP_CONFIG=" + upstream.MCPConfig(s.Servers, ws.Dir)}
			r = probes.CommandCheck(ctx, ws.Dir, []string{"sh", "-c", p.Command}, env, timeout)
		default:
			r = probes.Result{NoVerdict: fmt.Sprintf("unknown probe kind %q", p.Kind)}
		}
		if r.NoVerdict != "" && why == "" {
			why = r.NoVerdict
		}
		ok := r.OK && r.NoVerdict == ""
		detail := r.Detail
		if r.NoVerdict != "" {
			detail = r.NoVerdict
		}
		if p.Overrules {
			res.Checks = append(res.Checks, run.CheckResult{Check: p.Label() + " (overrules the others)", OK: ok, Got: detail})
			if r.NoVerdict == "" && overrule == nil {
				overrule = &run.Overrule{Check: p.Label(), WorldOK: ok, Detail: detail}
			}
			continue
		}
		res.Checks = append(res.Checks, run.CheckResult{Check: p.Label(), OK: ok, Got: detail})
		res.WorldOK = res.WorldOK && ok
		others, otherChecks = others && ok, otherChecks+1
	}
	if len(s.Servers) > 0 {
		if r, applies := probes.SwallowedWrites(log); applies {
			res.Checks = append(res.Checks, run.CheckResult{Check: "swallowed writes made again (from the record)", OK: r.OK, Got: r.Detail})
			res.WorldOK = res.WorldOK && r.OK
			others, otherChecks = others && r.OK, otherChecks+1
		}
	}
	if overrule != nil {
		overrule.Others, overrule.OtherChecks = &others, otherChecks
		overrule.Overruled = others != overrule.WorldOK
		res.Overrule = overrule
		res.WorldOK = overrule.WorldOK
	}
	return why
}

// fillProbe puts the trial's sandbox where an mcp probe says {sandbox} (a path that chaos
// record found under the recorded run's folder).
func fillProbe(p spec.Probe, dir string) spec.Probe {
	if len(p.Args) > 0 {
		b, _ := json.Marshal(dir)
		inner := string(b[1 : len(b)-1]) // the path as it stands inside a JSON string
		p.Args = json.RawMessage(spec.FillSandbox(string(p.Args), inner))
	}
	for _, v := range []*any{&p.Want.Equals, &p.Want.NotEquals} {
		if s, ok := (*v).(string); ok {
			*v = spec.FillSandbox(s, dir)
		}
	}
	p.Want.Contains = spec.FillSandbox(p.Want.Contains, dir)
	return p
}
