package shim

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/proxies/internal/procgroup"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// An adapter answers a script's calls where the spec's templates cannot say it: any
// executable, started once per trial, that reads one JSON request line per call on its
// stdin and writes one JSON reply line on its stdout (docs/shim.md, "The adapter"):
//
//	Hub.CallCommand ──> faults ──> Twin.Call(mode) ──request line──> adapter (own process group)
//	                                   <──reply line: exit, stdout, stderr, writes──┘
//	                     the writes stored in the twin's state as the mode says
//
// The faults stay chaos's: a fault that changes what a call does to the twin (nothing
// stored, stored empty, stored in another account, read from before the last write) is
// applied by chaos to the adapter's writes and read value, and the adapter is told of it
// (fault) only so that it can answer in kind; a fault that changes only the answer
// (phantom failure, transient and permanent errors, session drop, truncated reply,
// premature read) is applied by chaos to the adapter's answer, or instead of asking it.

// AdapterRequest is the line chaos writes to an adapter for one call.
type AdapterRequest struct {
	// Script is the script's name (the tool its calls become), Path its pattern.
	Script string `json:"script"`
	Path   string `json:"path"`
	// Argv is the command line as the agent ran it (the launcher first).
	Argv []string `json:"argv"`
	// Args are the arguments parsed as the script's entry names them.
	Args map[string]string `json:"args"`
	// Key is the state key the script's key template gives ("" when it has none),
	// Current the twin's value under it (for a stale read, its value before the last write
	// to it; null when none), State the whole state.
	Key     string         `json:"key,omitempty"`
	Current any            `json:"current"`
	State   map[string]any `json:"state"`
	// Fault is set when the armed fault changes what this call does to the twin.
	Fault *AdapterFault `json:"fault,omitempty"`
}

// AdapterFault tells an adapter what chaos does to a call's effect.
type AdapterFault struct {
	Family string `json:"family"`
	// Outcome: not_stored (the writes are dropped, success is answered), stored_empty
	// (each write stores ""), other_account (the writes land in another account), stale
	// (current is the value before the last write).
	Outcome string `json:"outcome"`
}

// Outcomes of AdapterFault.
const (
	OutcomeNotStored    = "not_stored"
	OutcomeStoredEmpty  = "stored_empty"
	OutcomeOtherAccount = "other_account"
	OutcomeStale        = "stale"
)

// AdapterReply is the line an adapter answers with.
type AdapterReply struct {
	// Exit is the script's exit code (0-255), required.
	Exit   *int   `json:"exit"`
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
	// Writes are the keys the call sets in the twin's state (a write script only).
	Writes map[string]any `json:"writes"`
}

// Limits on an adapter: its reply line, and how much of its own stderr (its diagnostics,
// not a call's stderr) is kept for the message when it fails.
const (
	maxAdapterReply  = 4 << 20
	maxAdapterStderr = 16 << 10
)

// adapterStatus marks a reply that is an adapter's non-zero exit (render prints it as it
// came); chaos's own failures keep their statuses (503, 401, ...).
const adapterStatus = 422

// AdapterFailedPrefix starts the reason of the rejected row of a call the adapter could
// not answer (it would not start, hung, crashed or replied garbage); such a trial has no
// verdict (AdapterFailure).
const AdapterFailedPrefix = "adapter: "

// Twin is the simulated world with adapters behind some of its scripts: a hub.ToolSource
// whose calls of those scripts are answered by their adapter processes. It is safe for
// concurrent use (the hub calls it one call at a time).
type Twin struct {
	*world.World
	family  string
	scripts map[string]spec.Script
	procs   map[string]*adapterProc // by command line
	mu      sync.Mutex
	failed  string
	stderr  string
}

// OpenTwin starts the adapters of s's scripts (each command line once, in dir, the spec's
// folder) and returns the twin, the world of s behind them. cond is the trial's armed
// condition (its family is what the adapter is told). Nil and no error when no script has
// an adapter.
func OpenTwin(s *spec.Spec, cond faults.Condition, dir string) (*Twin, error) {
	t := &Twin{World: world.New(s), family: cond.Family, scripts: map[string]spec.Script{}, procs: map[string]*adapterProc{}}
	for _, sc := range s.Scripts {
		if len(sc.Adapter) == 0 || sc.Real {
			continue
		}
		t.scripts[sc.Name] = sc
		key := strings.Join(sc.Adapter, "\x00")
		if t.procs[key] != nil {
			continue
		}
		p, err := startAdapter(sc.Adapter, dir)
		if err != nil {
			t.Close()
			return nil, fmt.Errorf("script %q: %w", sc.Name, err)
		}
		t.procs[key] = p
	}
	if len(t.scripts) == 0 {
		return nil, nil
	}
	return t, nil
}

// Call answers an adapter script's call by its adapter, storing its writes as mode says;
// any other tool's by the world.
func (t *Twin) Call(ctx context.Context, tool spec.Tool, args map[string]any, mode world.Mode) world.Reply {
	sc, ok := t.scripts[tool.Name]
	if !ok {
		return t.World.Call(ctx, tool, args, mode)
	}
	var f *AdapterFault
	switch mode {
	case world.Skip:
		f = &AdapterFault{Family: t.family, Outcome: OutcomeNotStored}
	case world.StoreEmpty:
		f = &AdapterFault{Family: t.family, Outcome: OutcomeStoredEmpty}
	case world.OtherAccount:
		f = &AdapterFault{Family: t.family, Outcome: OutcomeOtherAccount}
	}
	return t.ask(sc, args, f, false, mode)
}

// ReadBefore answers an adapter script's read with the key's value before the last write.
func (t *Twin) ReadBefore(tool spec.Tool, args map[string]any) world.Reply {
	sc, ok := t.scripts[tool.Name]
	if !ok {
		return t.World.ReadBefore(tool, args)
	}
	return t.ask(sc, args, &AdapterFault{Family: t.family, Outcome: OutcomeStale}, true, world.Perform)
}

// Fabricate is the success an adapter script would answer, acted out by its adapter
// (told not_stored) with its writes dropped (phantom success).
func (t *Twin) Fabricate(tool spec.Tool, args map[string]any) world.Reply {
	sc, ok := t.scripts[tool.Name]
	if !ok {
		return world.OK(world.SuccessText(tool))
	}
	return t.ask(sc, args, &AdapterFault{Family: t.family, Outcome: OutcomeNotStored}, false, world.Skip)
}

// ask puts one call to sc's adapter and turns its reply into the world's.
func (t *Twin) ask(sc spec.Script, args map[string]any, f *AdapterFault, before bool, mode world.Mode) world.Reply {
	t.mu.Lock()
	failed := t.failed
	t.stderr = ""
	t.mu.Unlock()
	if failed != "" {
		return world.Failure(502, failed)
	}
	req := AdapterRequest{Script: sc.Name, Path: sc.Path, Args: map[string]string{}, State: t.State(), Fault: f}
	for k, v := range args {
		switch k {
		case spec.ScriptKeyArg:
			req.Key, _ = v.(string)
		case scriptArgvArg:
			if l, ok := v.([]any); ok {
				for _, a := range l {
					s, _ := a.(string)
					req.Argv = append(req.Argv, s)
				}
			}
		default:
			if s, ok := v.(string); ok {
				req.Args[k] = s
			}
		}
	}
	if req.Key != "" {
		req.Current = t.Value(req.Key, before)
	}
	p := t.procs[strings.Join(sc.Adapter, "\x00")]
	rep, err := p.ask(req, time.Duration(sc.AdapterTimeout))
	if err == nil {
		err = checkReply(sc, rep)
	}
	if err != nil {
		why := fmt.Sprintf("the adapter of %s (%s) %v", sc.Name, strings.Join(sc.Adapter, " "), err)
		p.kill()
		t.mu.Lock()
		if t.failed == "" {
			t.failed = why
		}
		t.mu.Unlock()
		return world.Failure(502, why)
	}
	if sc.Effect == spec.EffectWrite {
		t.Apply(rep.Writes, mode)
	}
	if *rep.Exit != 0 {
		b, _ := json.Marshal(map[string]any{"error": rep.Stderr, "exit": *rep.Exit, "stdout": rep.Stdout})
		return world.Reply{Text: string(b), IsError: true, Status: adapterStatus}
	}
	t.mu.Lock()
	t.stderr = rep.Stderr
	t.mu.Unlock()
	return world.OK(rep.Stdout)
}

func checkReply(sc spec.Script, rep AdapterReply) error {
	switch {
	case rep.Exit == nil:
		return errors.New(`replied without "exit"`)
	case *rep.Exit < 0 || *rep.Exit > 255:
		return fmt.Errorf("replied exit %d (an exit code is 0-255)", *rep.Exit)
	case len(rep.Writes) > 0 && sc.Effect != spec.EffectWrite:
		return fmt.Errorf("replied writes for a script whose effect is %s (only a write script's writes are stored)", sc.Effect)
	}
	for k := range rep.Writes {
		if k == "" || strings.HasPrefix(k, world.OtherAccountPrefix) {
			return fmt.Errorf("replied a write to key %q (a key is not empty and not under %s, which chaos keeps for context switches)", k, world.OtherAccountPrefix)
		}
	}
	return nil
}

// Failure is why an adapter failed in this trial ("" while none has): every call of its
// scripts from then on is refused.
func (t *Twin) Failure() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.failed
}

// takeStderr is the stderr of the last adapter call that exited 0, once.
func (t *Twin) takeStderr() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.stderr
	t.stderr = ""
	return s
}

// Serves says whether name is a script this twin's adapters answer.
func (t *Twin) Serves(name string) bool {
	if t == nil {
		return false
	}
	_, ok := t.scripts[name]
	return ok
}

// Close ends every adapter's process group.
func (t *Twin) Close() error {
	for _, p := range t.procs {
		p.kill()
	}
	return nil
}

// adapterProc is one running adapter: its stdin, a reader of its reply lines, and the
// tail of its own stderr.
type adapterProc struct {
	argv   []string
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan lineOrErr
	exited chan struct{}
	stderr *tailBuffer
	once   sync.Once
	done   chan struct{}
}

type lineOrErr struct {
	line []byte
	err  error
}

func startAdapter(argv []string, dir string) (*adapterProc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = os.Environ()
	procgroup.Own(cmd)
	p := &adapterProc{argv: argv, cmd: cmd, lines: make(chan lineOrErr, 1), exited: make(chan struct{}), done: make(chan struct{}), stderr: &tailBuffer{max: maxAdapterStderr}}
	cmd.Stderr = p.stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("its adapter %s could not start: %w", strings.Join(argv, " "), err)
	}
	p.in = in
	go func() {
		r := bufio.NewReaderSize(out, 64<<10)
		for {
			line, err := readLine(r, maxAdapterReply)
			select {
			case p.lines <- lineOrErr{line, err}:
			case <-p.done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// ask writes req and waits up to timeout for the reply line.
func (p *adapterProc) ask(req AdapterRequest, timeout time.Duration) (AdapterReply, error) {
	var rep AdapterReply
	b, err := json.Marshal(req)
	if err != nil {
		return rep, fmt.Errorf("could not be asked: %w", err)
	}
	select {
	case l := <-p.lines:
		if l.err == nil {
			return rep, fmt.Errorf("wrote a line nobody asked for (one reply line per request): %q%s", clip(string(l.line), 200), p.tail())
		}
		p.kill()
		<-p.exited
		return rep, p.gone()
	case <-p.exited:
		return rep, p.gone()
	default:
	}
	if _, err := p.in.Write(append(b, '\n')); err != nil {
		return rep, fmt.Errorf("could not be written to (%v)%s", err, p.tail())
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case l := <-p.lines:
		if l.err != nil {
			if errors.Is(l.err, io.EOF) || errors.Is(l.err, os.ErrClosed) {
				p.kill() // a child of it may hold its stderr open
				<-p.exited
				return rep, p.gone()
			}
			return rep, fmt.Errorf("sent a reply line that could not be read: %v%s", l.err, p.tail())
		}
		dec := json.NewDecoder(strings.NewReader(string(l.line)))
		if err := dec.Decode(&rep); err != nil {
			return rep, fmt.Errorf("sent a reply that is not the protocol's JSON object (%v): %q%s", err, clip(string(l.line), 200), p.tail())
		}
		return rep, nil
	case <-timer.C:
		return rep, fmt.Errorf("did not answer within %s (adapter_timeout)%s", timeout, p.tail())
	}
}

func (p *adapterProc) gone() error {
	return fmt.Errorf("exited (%v) before answering%s", p.cmd.ProcessState, p.tail())
}

func (p *adapterProc) tail() string {
	s := strings.TrimSpace(p.stderr.String())
	if s == "" {
		return ""
	}
	return "; its stderr ends: " + clip(s, -2000)
}

// kill ends the adapter's process group (once).
func (p *adapterProc) kill() {
	p.once.Do(func() {
		close(p.done)
		p.in.Close()
		procgroup.Kill(p.cmd)
	})
}

// clip keeps the first n bytes of s (the last -n when n < 0), marking the cut.
func clip(s string, n int) string {
	switch {
	case n >= 0 && len(s) > n:
		return s[:n] + "..."
	case n < 0 && len(s) > -n:
		return "..." + s[len(s)+n:]
	}
	return s
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
