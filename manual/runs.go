package manual

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/probes"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/report"
)

// Start opens a run on name (the only server set up when name is ""), with the next
// fault of the deck, which the user is not told.
func (m *Mode) Start(name string) error {
	dir, err := m.dir()
	if err != nil {
		return err
	}
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
	if _, err := loadServer(dir, name); err != nil {
		return err
	}
	if open, ok := readRun(filepath.Join(dir, "current.json")); ok {
		return badInput(fmt.Errorf("a run on %s is already open (started %s): end it with chaos proxy end --said done|not-done|unsure", open.Name, open.Started.Local().Format(time.Kitchen)))
	}
	deckPath := filepath.Join(dir, "deck.json")
	var d deck
	if b, err := os.ReadFile(deckPath); err == nil {
		json.Unmarshal(b, &d)
	}
	if d.Next >= len(d.Deck) {
		d.Deck, d.Next = append([]string(nil), Families...), 0
		shuffle := m.Shuffle
		if shuffle == nil {
			shuffle = func(xs []string) {
				r := mrand.New(mrand.NewPCG(randomUint(), randomUint()))
				r.Shuffle(len(xs), func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
			}
		}
		shuffle(d.Deck)
	}
	run := run{ID: time.Now().UTC().Format("20060102-150405") + "-" + randomHex(3), Name: name, Family: d.Deck[d.Next],
		Seed: int64(randomUint() >> 1), Started: time.Now().UTC()}
	d.Next++
	d.Runs++
	if err := writeJSON(deckPath, d); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(dir, "current.json"), run); err != nil {
		return err
	}
	fmt.Fprintf(m.Out, "Run %d (%d of %d in this deck) is open on %s, with a fault you are not told.\n", d.Runs, d.Next, len(d.Deck), name)
	fmt.Fprintf(m.Out, "Work with your agent as usual; when it is done, run:\n  chaos proxy end --said done|not-done|unsure\n")
	return nil
}

// End closes the open run: the calls (the faulted one marked), the fault, the world (from
// the calls, else as the user found it: world is right, wrong or "") and the verdict for
// what the user says the agent said (done, not-done or unsure).
func (m *Mode) End(saidFlag, world string) error {
	said := map[string]string{"done": report.ClaimSuccess, "not-done": report.ClaimFailure, "unsure": report.ClaimUnclear}
	claim, ok := said[saidFlag]
	if !ok {
		return badInput(fmt.Errorf("--said is required: what the agent told you at the end, done, not-done or unsure (got %q)", saidFlag))
	}
	if world != "" && world != "right" && world != "wrong" {
		return badInput(fmt.Errorf("--world is right or wrong, got %q", world))
	}
	dir, err := m.dir()
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
	run.Ended, run.Said = time.Now().UTC(), saidFlag

	out := m.Out
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
	fmt.Fprintf(out, "\nThe fault: %s%s: %s.\n", run.Family, on, what(run.Family))
	fmt.Fprintf(out, "You said the agent said: %s.\n", saidFlag)

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
	} else if world != "" {
		worldKnown, worldOK = true, world == "right"
		run.World = "you looked: " + world
	}
	if faults.EndsTheSession(run.Family) && run.Fired > 0 {
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

// Results prints every ended run, per fault, and the faults not run yet.
func (m *Mode) Results() error {
	dir, err := m.dir()
	if err != nil {
		return err
	}
	b, err := os.ReadFile(filepath.Join(dir, "results.jsonl"))
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintln(m.Out, "No manual runs yet: chaos proxy start opens one.")
		return nil
	}
	if err != nil {
		return err
	}
	byFamily := map[string][]run{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r run
		if json.Unmarshal([]byte(line), &r) == nil && r.Family != "" {
			byFamily[r.Family] = append(byFamily[r.Family], r)
		}
	}
	tw := tabwriter.NewWriter(m.Out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FAULT\tRUNS\tAGENT SAID\tVERDICTS")
	var notYet []string
	for _, f := range Families {
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
		fmt.Fprintf(m.Out, "\nNot run yet: %s\n", strings.Join(notYet, ", "))
	}
	return nil
}

func counts(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
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
