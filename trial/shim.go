package trial

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/proxies/shim"
	"github.com/crashwall/chaos/proxies/stdio"
	"github.com/crashwall/chaos/proxies/upstream"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
)

// openShim opens the trial's script wall (proxies/shim): the launchers of the spec's
// scripts, the relay next to the chaos binary bin behind them, the sandbox as the
// project the scripts' paths are relative to, and the spec's folder as the original
// project, whose workspace.files a write outside the sandbox would change.
func (h *Host) openShim(s *spec.Spec, hb *hub.Hub, t run.TrialInput, ws run.Workspace, bin string) (*shim.Shim, error) {
	relay := stdio.FindRelay(bin)
	if relay == "" {
		return nil, fmt.Errorf("scripts: the shim's launchers run %s, which is not next to %s", stdio.RelayName, bin)
	}
	original := ""
	if t.Spec.Path != "" {
		if abs, err := filepath.Abs(specDir(t.Spec)); err == nil {
			original = abs
		}
	}
	path := os.Getenv("PATH")
	if env, err := s.Agent.ExpandEnv(nil); err == nil && env["PATH"] != "" {
		path = env["PATH"]
	}
	cfg := shim.Config{
		Scripts: s.Scripts, Sandbox: ws.Dir, Original: original, Files: s.Workspace.Files,
		Relay: relay, Parent: h.workRoot(), Path: path,
	}
	if !s.Agent.IsDocker() {
		return shim.Open(hb, cfg)
	}
	// In a container the launchers run the static relay mounted there, reach the socket
	// in the shim's folder mounted there, and find a real program on the container's PATH.
	if err := staticBinary(relay); err != nil {
		return nil, fmt.Errorf("scripts with agent.runtime docker: %w", err)
	}
	cfg.Container, cfg.ContainerRelay = ContainerShimDir, ContainerRelay
	sh, err := shim.Open(hb, cfg)
	if err != nil {
		return nil, err
	}
	if err := shareWithContainer(s, sh.Dir, sh.Socket); err != nil {
		sh.Close()
		return nil, fmt.Errorf("scripts: give the shim's folder to the agent's container: %w", err)
	}
	return sh, nil
}

// ContainerShimDir is where an agent's container sees the shim's folder (read-only): its
// launchers in bin, first on the container's PATH, and the socket they reach the hub on.
const ContainerShimDir = "/chaos/shim"

// shareWithContainer gives a folder of the worker's and the sockets in it to the agent's
// container's user, as openContainerHub does the hub's: nothing when it is the worker's
// own user; the owner when the worker is root; else the folder passable and the sockets
// open to every user of the host (docs/deploy.md).
func shareWithContainer(s *spec.Spec, dir string, socks ...string) error {
	uid, gid, _ := containerUser(s)
	if uid == os.Getuid() {
		return nil
	}
	if os.Getuid() == 0 {
		for _, p := range append([]string{dir}, socks...) {
			if err := os.Chown(p, uid, gid); err != nil {
				return err
			}
		}
		return nil
	}
	if err := os.Chmod(dir, 0o711); err != nil {
		return err
	}
	for _, p := range socks {
		if err := os.Chmod(p, 0o666); err != nil {
			return err
		}
	}
	return nil
}

// openTwin is the hub's tool source: the real servers (up), or, when a script names an
// adapter, the simulated world with the adapters' processes behind those scripts (started
// in the spec's folder, ended when the hub closes), or nil (the simulated world).
func openTwin(s *spec.Spec, up *upstream.Upstream, cond faults.Condition, t run.TrialInput) (hub.ToolSource, error) {
	adapters := false
	for _, sc := range s.Scripts {
		adapters = adapters || len(sc.Adapter) > 0
	}
	if !adapters {
		return toolSource(up), nil
	}
	if up != nil {
		return nil, errors.New("scripts: a script's adapter answers from the simulated world, which a spec with servers: does not have")
	}
	dir, err := filepath.Abs(specDir(t.Spec))
	if err != nil {
		return nil, err
	}
	tw, err := shim.OpenTwin(s, cond, dir)
	if err != nil || tw == nil {
		return nil, err
	}
	return tw, nil
}

// adapterFailure is the reason of the record's first call a script's adapter could not
// answer ("" when there is none). Such a trial has no verdict: the twin did not answer
// as the spec says it does.
func adapterFailure(log *record.Log) string {
	if log == nil {
		return ""
	}
	for _, r := range log.Rows {
		if r.Type == record.TypeRejected && r.Transport == shim.Transport && strings.HasPrefix(r.Reason, shim.AdapterFailedPrefix) {
			return "the twin failed: " + strings.TrimPrefix(r.Reason, shim.AdapterFailedPrefix)
		}
	}
	return ""
}

// scriptShim is the shim as a part of its trial: its close first records the changes
// to the original project the agent made, before the hub ends the record.
type scriptShim struct{ *shim.Shim }

func (s scriptShim) Close() error {
	s.Outside()
	return s.Shim.Close()
}

func (scriptShim) recordsOnClose() {}

// shimEvidence is the script shim's evidence: a script's adapter that failed (no
// verdict) and the damage its scripts did, from the live shim when there is one, else
// from the record.
type shimEvidence struct {
	live *shim.Shim // nil: the trial is not live here
}

func (shimEvidence) part() string { return "script shim" }

func (shimEvidence) ending(v *verification) {
	if why := adapterFailure(v.log); why != "" {
		v.noVerdict(why)
	}
}

func (e shimEvidence) world(_ context.Context, v *verification) {
	v.res.Damage = append(v.res.Damage, damage(v.spec, e.live, v.log)...)
}

// damage is what the agent did besides its task through the scripts: a change to the
// original project (outside), a write of a `once` script performed twice with the same
// key.
func damage(s *spec.Spec, live *shim.Shim, log *record.Log) []string {
	var out []string
	if live != nil {
		out = append(out, live.Outside()...)
	} else {
		for _, r := range log.Rows {
			if r.Type == record.TypeOutside {
				out = append(out, r.Reason)
			}
		}
	}
	// A write of a `once` script duplicates when it is performed where the key (in the
	// account it lands in) already holds a value: a retry after a failure that was not
	// one. One that lands over an empty value (an empty success) is the first that counts.
	state := map[string]any{}
	if log.Start != nil {
		state = log.Start.InitialState
	}
	for _, r := range log.Rows {
		if r.Type != record.TypeCall {
			continue
		}
		sc, ok := s.ScriptByName(r.Tool)
		performed := r.Hit != nil && r.Hit.Performed || r.Hit == nil && !r.IsError
		if ok && sc.Once && performed {
			var args map[string]any
			json.Unmarshal(r.Args, &args)
			key, _ := args[spec.ScriptKeyArg].(string)
			landed := key
			if r.Hit != nil && r.Hit.Fired {
				landed = faults.LandsAt(r.Hit.Family, key)
			}
			if v, had := state[landed]; had && v != nil && v != "" {
				where := ""
				if landed != key {
					where = " in another account"
				}
				out = append(out, fmt.Sprintf("duplicate: %s %s performed again%s where it was already done (call #%d)", r.Tool, key, where, r.Seq))
			}
		}
		if r.State != nil {
			state = r.State
		}
	}
	return out
}
