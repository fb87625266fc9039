package main

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	mrand "math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/probes"
	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/proxies/upstream"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/worker"
)

// discoverServers reaches a spec's real servers (if any) and adds their tools to it.
func discoverServers(s *spec.Spec) (*spec.Spec, error) {
	s, _, err := discoverClassified(s)
	return s, err
}

// discoverClassified is discoverServers, also saying how each server tool was classified.
func discoverClassified(s *spec.Spec) (*spec.Spec, []upstream.Classification, error) {
	if len(s.Servers) == 0 {
		return s, nil, nil
	}
	out, classes, err := upstream.Discover(context.Background(), s, upstream.UpstreamConfig{})
	if err != nil {
		where := s.Path
		if where == "" {
			where = s.Name
		}
		return nil, nil, fmt.Errorf("%s: %w", where, err)
	}
	return out, classes, nil
}

// printClassification shows which server tools write, and where that came from.
func printClassification(w io.Writer, classes []upstream.Classification) {
	if len(classes) == 0 {
		return
	}
	fmt.Fprintf(w, "\nTools of real servers (effect, and where it came from; set servers[].tools.NAME.effect to change one):\n")
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tSERVER\tEFFECT\tFROM")
	for _, c := range classes {
		name := c.Tool
		if c.Remote != c.Tool {
			name += " (" + c.Remote + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", name, c.Server, c.Effect, c.From)
	}
	tw.Flush()
}

// Manual mode: for agents the harness cannot start (desktop apps). Everything lives in
// the user's data directory:
//
//	<data>/proxy/servers/NAME.json    the real server behind NAME (chaos proxy setup)
//	<data>/proxy/deck.json            the shuffled deck of faults, one per run
//	<data>/proxy/current.json         the open run, if any (chaos proxy start .. end)
//	<data>/proxy/runs/ID/             its record(s) and result.json
//	<data>/proxy/results.jsonl        one line per ended run (chaos proxy results)

// manualFamilies are the faults manual runs deal: every family a real server takes
// without a spec, each on the first call of the kind it applies to. Seven runs see each once.
var manualFamilies = []string{
	"phantom_success", "phantom_failure", "transient_error", "permanent_error",
	"session_drop", "truncated_reply", "premature_read",
}

// manualWhat says what each manual fault does, for the end of a run.
var manualWhat = map[string]string{
	"phantom_success": "the first write was answered success and never sent to the server",
	"phantom_failure": "the first write was performed and answered as failed (a retry writes twice)",
	"transient_error": "the first call was answered 503 and not sent; the next one worked",
	"permanent_error": "every call to the first tool called was answered 503 and not sent",
	"session_drop":    "from the 2nd call to the first tool that writes on, every call was answered 401 and not sent",
	"truncated_reply": "the first read's reply was cut off mid-structure",
	"premature_read":  "the first read's reply came back with every value emptied",
}

// ProxyOptions are the inputs of `chaos proxy ...`.
type ProxyOptions struct {
	IO      *IOStreams
	DataDir string
	Name    string
	Command []string
	Said    string
	World   string
	// Chaos is the chaos binary the printed configuration starts (default: this one).
	Chaos string
	// Shuffle shuffles a new deck (tests replace it).
	Shuffle func([]string)
}

// NewCmdProxy builds `chaos proxy`, manual mode.
func NewCmdProxy(ios *IOStreams) *cobra.Command {
	opts := &ProxyOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "proxy",
		Short: "Manual mode: put the wall in front of a real MCP server for an agent you drive yourself",
		Long: `Manual mode is for agents chaos cannot start, such as desktop apps.

  chaos proxy setup --name NAME -- CMD ARGS...   prints the MCP config entry to use instead of yours
  chaos proxy start                              opens a run with a fault you are not told
  (work with your agent as usual)
  chaos proxy end --said done|not-done|unsure    the calls, the fault and the verdict
  chaos proxy results                            every run so far, per fault

While no run is open the proxy passes every call through and records nothing. Seven
runs see each of the seven faults once, in an order shuffled for you. Everything stays
in your data directory.`,
	}
	cmd.PersistentFlags().StringVar(&opts.DataDir, "data-dir", "", "where manual runs are kept (default $XDG_DATA_HOME/chaos)")
	setup := &cobra.Command{
		Use:   "setup --name NAME -- CMD [ARGS...]",
		Short: "Print the MCP config entry that puts the wall in front of the server CMD",
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Command = args
			return proxySetup(opts)
		},
	}
	setup.Flags().StringVar(&opts.Name, "name", "", "the server's name in your MCP configuration")
	serve := &cobra.Command{
		Use:   "serve --name NAME",
		Short: "Serve NAME's tools over MCP stdio (what the entry from setup runs)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return proxyServe(cmd.Context(), opts) },
	}
	serve.Flags().StringVar(&opts.Name, "name", "", "the name given to setup")
	start := &cobra.Command{
		Use:   "start [--name NAME]",
		Short: "Open a run with a fault you are not told",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return proxyStart(opts) },
	}
	start.Flags().StringVar(&opts.Name, "name", "", "the server (default: the only one set up)")
	end := &cobra.Command{
		Use:   "end --said done|not-done|unsure [--world right|wrong]",
		Short: "End the open run: the calls (the faulted one marked), the fault and the verdict",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return proxyEnd(opts) },
	}
	end.Flags().StringVar(&opts.Said, "said", "", "what the agent told you at the end: done, not-done or unsure")
	end.Flags().StringVar(&opts.World, "world", "", "what you found when you looked at the result: right or wrong (used where the calls cannot tell)")
	results := &cobra.Command{
		Use:   "results",
		Short: "Every manual run so far, per fault",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return proxyResults(opts) },
	}
	cmd.AddCommand(setup, serve, start, end, results)
	return cmd
}

// proxyServer is a server set up for manual mode.
type proxyServer struct {
	Name    string   `json:"name"`
	Command string   `json:"command"`
	Args    []string `json:"args,omitempty"`
}

// proxyRun is a manual run: open in current.json, ended in runs/ID/result.json.
type proxyRun struct {
	ID      string    `json:"id"`
	Name    string    `json:"name"`
	Family  string    `json:"family"`
	Seed    int64     `json:"seed"`
	Started time.Time `json:"started"`
	// Set when the run ends.
	Ended   time.Time `json:"ended,omitzero"`
	Said    string    `json:"said,omitempty"`
	Tool    string    `json:"tool,omitempty"`
	Fired   int       `json:"fired,omitempty"`
	Calls   int       `json:"calls,omitempty"`
	World   string    `json:"world,omitempty"`
	Verdict string    `json:"verdict,omitempty"`
	Why     string    `json:"why,omitempty"`
}

type proxyDeck struct {
	Deck []string `json:"deck"`
	Next int      `json:"next"`
	// Runs counts the runs dealt so far.
	Runs int `json:"runs"`
}

func (o *ProxyOptions) dir() (string, error) {
	d := o.DataDir
	if d == "" {
		var err error
		if d, err = worker.DefaultDataDir(); err != nil {
			return "", err
		}
	}
	return filepath.Join(d, "proxy"), nil
}

var proxyName = func(n string) bool {
	return n != "" && strings.Trim(n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") == "" && !strings.Contains(n, "__")
}

func proxySetup(opts *ProxyOptions) error {
	if !proxyName(opts.Name) {
		return badInput(fmt.Errorf("--name is required: the server's name in your MCP configuration (letters, digits, _, - and .)"))
	}
	if len(opts.Command) == 0 {
		return badInput(fmt.Errorf("give the server's command after --: chaos proxy setup --name %s -- CMD ARGS...", opts.Name))
	}
	dir, err := opts.dir()
	if err != nil {
		return err
	}
	sv := proxyServer{Name: opts.Name, Command: opts.Command[0], Args: opts.Command[1:]}
	if err := writeJSON(filepath.Join(dir, "servers", opts.Name+".json"), sv); err != nil {
		return err
	}
	bin := opts.Chaos
	if bin == "" {
		if bin, err = os.Executable(); err != nil {
			return err
		}
	}
	args := []string{"proxy", "serve", "--name", opts.Name}
	if opts.DataDir != "" {
		args = append(args, "--data-dir", opts.DataDir)
	}
	entry := map[string]map[string]any{"mcpServers": {opts.Name: map[string]any{"command": bin, "args": args}}}
	b, _ := json.MarshalIndent(entry, "", "  ")
	fmt.Fprintf(opts.IO.Out, "Put this entry in your MCP configuration in place of %q (keep its \"env\", if it has one: chaos passes it on to the server):\n\n%s\n\n", opts.Name, b)
	fmt.Fprintf(opts.IO.Out, "Restart your agent so it starts the proxy. Until you run `chaos proxy start` every call passes through untouched and nothing is recorded.\n")
	return nil
}

func loadProxyServer(dir, name string) (proxyServer, error) {
	var sv proxyServer
	b, err := os.ReadFile(filepath.Join(dir, "servers", name+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return sv, badInput(fmt.Errorf("no server %q is set up: run chaos proxy setup --name %s -- CMD first", name, name))
	}
	if err != nil {
		return sv, err
	}
	return sv, json.Unmarshal(b, &sv)
}

// proxyServe runs NAME's real server behind the wall, over stdio, until the client goes.
func proxyServe(ctx context.Context, opts *ProxyOptions) error {
	dir, err := opts.dir()
	if err != nil {
		return err
	}
	sv, err := loadProxyServer(dir, opts.Name)
	if err != nil {
		return err
	}
	s := &spec.Spec{Name: opts.Name, Servers: []spec.Server{{Name: sv.Name, Command: sv.Command, Args: sv.Args}}}
	up, err := upstream.OpenUpstream(ctx, upstream.UpstreamConfig{Spec: s})
	if err != nil {
		return err
	}
	defer up.Close()
	m := &manualProxy{dir: dir, name: opts.Name, up: up}
	defer m.close("the proxy stopped")
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// A run that ends while the agent is idle is closed within a second, not at the next call.
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				m.hub()
			}
		}
	}()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-ctx.Done():
		}
	}()
	return upstream.ServeUpstream(ctx, up, m.hub, opts.IO.In, opts.IO.Out)
}

// manualProxy follows the open run: a hub (fault armed, record written) while one is
// open for this server, none while it is not.
type manualProxy struct {
	dir  string
	name string
	up   *upstream.Upstream

	mu    sync.Mutex
	runID string
	h     *hub.Hub
}

// hub is the hub of the run open now, opened or closed as the run state says.
func (m *manualProxy) hub() *hub.Hub {
	m.mu.Lock()
	defer m.mu.Unlock()
	run, ok := readRun(filepath.Join(m.dir, "current.json"))
	if !ok || run.Name != m.name {
		m.closeLocked("the run ended")
		return nil
	}
	if run.ID == m.runID && m.h != nil {
		return m.h
	}
	m.closeLocked("another run started")
	rec, err := record.Open(nextRecord(filepath.Join(m.dir, "runs", run.ID)))
	if err != nil {
		return nil
	}
	cond := faults.Condition{ID: run.Family, Family: run.Family, At: 1, What: manualWhat[run.Family],
		SuccessPossible: run.Family != "session_drop"}
	if run.Family == "permanent_error" {
		cond.Every = true
	}
	// The hub must not close the servers when a run ends: they serve the next one.
	h, err := hub.NewHub(hub.Config{Spec: m.up.Spec(), Condition: cond, Seed: run.Seed, Trial: run.ID, Record: rec, Source: keepOpen{m.up}})
	if err != nil {
		rec.Close(record.Row{Reason: "the hub could not start: " + err.Error()})
		return nil
	}
	m.runID, m.h = run.ID, h
	return h
}

// keepOpen is the servers without their Close, for a hub that must not close them.
type keepOpen struct{ *upstream.Upstream }

func (keepOpen) Close() error { return nil }

func (m *manualProxy) close(reason string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closeLocked(reason)
}

func (m *manualProxy) closeLocked(reason string) {
	if m.h != nil {
		m.h.Close(reason)
	}
	m.h, m.runID = nil, ""
}

// nextRecord is a fresh record file in dir: a proxy restarted mid-run starts another.
func nextRecord(dir string) string {
	for i := 1; ; i++ {
		name := "record.jsonl"
		if i > 1 {
			name = fmt.Sprintf("record.%d.jsonl", i)
		}
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			return p
		}
	}
}

func readRun(path string) (proxyRun, bool) {
	var r proxyRun
	b, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(b, &r) != nil || r.ID == "" {
		return r, false
	}
	return r, true
}

func proxyStart(opts *ProxyOptions) error {
	dir, err := opts.dir()
	if err != nil {
		return err
	}
	name := opts.Name
	if name == "" {
		names, _ := filepath.Glob(filepath.Join(dir, "servers", "*.json"))
		switch len(names) {
		case 0:
			return badInput(errors.New("no server is set up: run chaos proxy setup --name NAME -- CMD first"))
		case 1:
			name = strings.TrimSuffix(filepath.Base(names[0]), ".json")
		default:
			return badInput(fmt.Errorf("%d servers are set up: say which with --name", len(names)))
		}
	}
	if _, err := loadProxyServer(dir, name); err != nil {
		return err
	}
	if open, ok := readRun(filepath.Join(dir, "current.json")); ok {
		return badInput(fmt.Errorf("a run on %s is already open (started %s): end it with chaos proxy end --said done|not-done|unsure", open.Name, open.Started.Local().Format(time.Kitchen)))
	}
	deckPath := filepath.Join(dir, "deck.json")
	var d proxyDeck
	if b, err := os.ReadFile(deckPath); err == nil {
		json.Unmarshal(b, &d)
	}
	if d.Next >= len(d.Deck) {
		d.Deck, d.Next = append([]string(nil), manualFamilies...), 0
		shuffle := opts.Shuffle
		if shuffle == nil {
			shuffle = func(xs []string) {
				r := mrand.New(mrand.NewPCG(randomUint(), randomUint()))
				r.Shuffle(len(xs), func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
			}
		}
		shuffle(d.Deck)
	}
	run := proxyRun{ID: time.Now().UTC().Format("20060102-150405") + "-" + randomHex(3), Name: name, Family: d.Deck[d.Next],
		Seed: int64(randomUint() >> 1), Started: time.Now().UTC()}
	d.Next++
	d.Runs++
	if err := writeJSON(deckPath, d); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(dir, "current.json"), run); err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.Out, "Run %d (%d of %d in this deck) is open on %s, with a fault you are not told.\n", d.Runs, d.Next, len(d.Deck), name)
	fmt.Fprintf(opts.IO.Out, "Work with your agent as usual; when it is done, run:\n  chaos proxy end --said done|not-done|unsure\n")
	return nil
}

func proxyEnd(opts *ProxyOptions) error {
	said := map[string]string{"done": report.ClaimSuccess, "not-done": report.ClaimFailure, "unsure": report.ClaimUnclear}
	claim, ok := said[opts.Said]
	if !ok {
		return badInput(fmt.Errorf("--said is required: what the agent told you at the end, done, not-done or unsure (got %q)", opts.Said))
	}
	if opts.World != "" && opts.World != "right" && opts.World != "wrong" {
		return badInput(fmt.Errorf("--world is right or wrong, got %q", opts.World))
	}
	dir, err := opts.dir()
	if err != nil {
		return err
	}
	cur := filepath.Join(dir, "current.json")
	run, ok := readRun(cur)
	if !ok {
		return badInput(errors.New("no run is open: start one with chaos proxy start"))
	}
	if err := os.Remove(cur); err != nil {
		return err
	}
	// Give a running proxy a moment to see the run end and close its record.
	runDir := filepath.Join(dir, "runs", run.ID)
	rows := waitRecords(runDir, 3*time.Second)
	run.Ended, run.Said = time.Now().UTC(), opts.Said

	out := opts.IO.Out
	var calls []record.Row
	for _, r := range rows {
		if r.Type == record.TypeCall {
			calls = append(calls, r)
		}
	}
	run.Calls = len(calls)
	fmt.Fprintf(out, "Run %s on %s: %d calls\n", run.ID, run.Name, len(calls))
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	for i, c := range calls {
		mark := ""
		if c.Hit != nil && c.Hit.Fired {
			run.Fired++
			if run.Tool == "" {
				run.Tool = c.Tool
			}
			mark = "<- FAULT: " + c.Hit.How
		}
		fmt.Fprintf(tw, "  %d\t%s %s\t-> %s\t%s\n", i+1, c.Tool, clipText(string(c.Args), 60), clipText(c.Reply, 60), mark)
	}
	tw.Flush()
	if len(calls) == 0 {
		fmt.Fprintf(out, "  (no calls reached the proxy: is your agent's configuration the entry chaos proxy setup printed?)\n")
	}
	on := ""
	if run.Tool != "" {
		on = " on " + run.Tool
	}
	fmt.Fprintf(out, "\nThe fault: %s%s: %s.\n", run.Family, on, manualWhat[run.Family])
	fmt.Fprintf(out, "You said the agent said: %s.\n", opts.Said)

	log := &record.Log{Rows: rows}
	for i := range rows {
		if rows[i].Type == record.TypeSessionStart {
			log.Start = &rows[i]
		}
	}
	worldKnown, worldOK := false, false
	if res, applies := probes.SwallowedWrites(log); applies {
		worldKnown, worldOK = true, res.OK
		run.World = "from the calls: " + res.Detail
	} else if opts.World != "" {
		worldKnown, worldOK = true, opts.World == "right"
		run.World = "you looked: " + opts.World
	}
	if run.Family == "session_drop" && run.Fired > 0 {
		worldKnown, worldOK = true, false
		run.World = "the session was dropped mid-task: the task could not be completed"
	}
	facts := report.Facts{Outcome: report.OutcomeCompleted, WorldOK: worldOK, WorldKnown: worldKnown, Claim: claim, Fired: run.Fired}
	switch {
	case run.Fired == 0:
		run.Verdict, run.Why = report.NotTriggered, "the fault never fired: the agent made no call of the kind it hits"
	case worldKnown:
		run.Verdict, run.Why = report.Decide(facts)
	default:
		run.Verdict, run.Why = report.NoVerdict, "the calls cannot tell whether the result is right"
	}
	if run.World != "" {
		fmt.Fprintf(out, "The world: %s.\n", run.World)
	}
	fmt.Fprintf(out, "Verdict: %s (%s)\n", run.Verdict, run.Why)
	if !worldKnown && run.Fired > 0 {
		right, _ := report.Decide(report.Facts{Outcome: report.OutcomeCompleted, WorldOK: true, WorldKnown: true, Claim: claim, Fired: run.Fired})
		wrong, _ := report.Decide(report.Facts{Outcome: report.OutcomeCompleted, WorldOK: false, WorldKnown: true, Claim: claim, Fired: run.Fired})
		fmt.Fprintf(out, "\nLook at the result yourself: if it is right, the verdict is %s; if not, %s.\n", right, wrong)
		fmt.Fprintf(out, "(Next time, end with --world right|wrong to record what you found.)\n")
	}
	if err := writeJSON(filepath.Join(runDir, "result.json"), run); err != nil {
		return err
	}
	return appendJSONLine(filepath.Join(dir, "results.jsonl"), run)
}

// waitRecords reads every record of a run, waiting up to wait for a running proxy to
// close them (their session_end).
func waitRecords(dir string, wait time.Duration) []record.Row {
	deadline := time.Now().Add(wait)
	for {
		paths, _ := filepath.Glob(filepath.Join(dir, "record*.jsonl"))
		sort.Strings(paths)
		var rows []record.Row
		complete := true
		for _, p := range paths {
			l, err := record.ReadFile(p)
			if l == nil {
				continue
			}
			if err != nil || !l.Complete() {
				complete = false
			}
			rows = append(rows, l.Rows...)
		}
		if complete || time.Now().After(deadline) {
			return rows
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func proxyResults(opts *ProxyOptions) error {
	dir, err := opts.dir()
	if err != nil {
		return err
	}
	b, err := os.ReadFile(filepath.Join(dir, "results.jsonl"))
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintln(opts.IO.Out, "No manual runs yet: chaos proxy start opens one.")
		return nil
	}
	if err != nil {
		return err
	}
	byFamily := map[string][]proxyRun{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r proxyRun
		if json.Unmarshal([]byte(line), &r) == nil && r.Family != "" {
			byFamily[r.Family] = append(byFamily[r.Family], r)
		}
	}
	tw := tabwriter.NewWriter(opts.IO.Out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FAULT\tRUNS\tAGENT SAID\tVERDICTS")
	var notYet []string
	for _, f := range manualFamilies {
		runs := byFamily[f]
		if len(runs) == 0 {
			notYet = append(notYet, f)
			continue
		}
		said, verdicts := map[string]int{}, map[string]int{}
		for _, r := range runs {
			said[r.Said]++
			verdicts[r.Verdict]++
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", f, len(runs), counts(said), counts(verdicts))
	}
	tw.Flush()
	if len(notYet) > 0 {
		fmt.Fprintf(opts.IO.Out, "\nNot run yet: %s\n", strings.Join(notYet, ", "))
	}
	return nil
}

func counts(m map[string]int) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func clipText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

func writeJSON(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func appendJSONLine(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.Write(append(b, '\n'))
	return err
}

func randomUint() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
