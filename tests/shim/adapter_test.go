package shim_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/tests/chaosbin"
	"github.com/crashwall/chaos/tests/testkit"
)

// TestPortalAdapter: examples/portal/adapter.yaml, whose scripts are answered by
// twin/adapter.py (a Python stdlib adapter, one process per trial) instead of templates.
// The blind agent is correct on clean and silent_wrong under phantom success, the
// verifying one correct on both and under a stale read; what the agent got is the
// adapter's own text (its tracking numbers, which no template says), and the faults are
// chaos's (the phantom booking is not in the state, the stale read answered from before).
func TestPortalAdapter(t *testing.T) {
	dir, _, env := portal(t)
	spec := filepath.Join(dir, "adapter.yaml")
	blind, blindLogs := runSpec(t, spec, env, "sh agents/blind.sh", "clean", "phantom_success@book_shipment")
	if v := blind["clean"].Verdict; v != report.Correct {
		t.Errorf("blind, clean: %s (%s), want correct", v, blind["clean"].VerdictWhy)
	}
	if v := blind["phantom_success@book_shipment"].Verdict; v != report.SilentWrong {
		t.Errorf("blind, phantom success: %s (%s), want silent_wrong", v, blind["phantom_success@book_shipment"].VerdictWhy)
	}
	checkUnits(t, blind["phantom_success@book_shipment"], report.SilentWrong, report.Correct)
	first := func(l *record.Log) record.Row {
		t.Helper()
		calls := shimCalls(l)
		if len(calls) == 0 {
			t.Fatalf("no shim call")
		}
		return calls[0]
	}
	if c := first(blindLogs["clean"]); c.Type != record.TypeCall || c.Stdout != "booked R-101 with DHL (tracking DHL-R101-0001)\n" || c.State["shipment/R-101"] != "DHL" {
		t.Errorf("clean, the first booking: %+v; want the adapter's line and R-101 stored", c)
	}
	c := first(blindLogs["phantom_success@book_shipment"])
	if c.Hit == nil || !c.Hit.Fired || c.Stdout != "booked R-101 with DHL (tracking DHL-R101-0001)\n" || c.State["shipment/R-101"] != nil {
		t.Errorf("phantom success, the first booking: %+v; want the adapter's success line, nothing stored", c)
	}

	verifying, vlogs := runSpec(t, spec, env, "sh agents/verifying.sh", "clean", "phantom_success@book_shipment", "stale_read@get_shipment")
	for cond, r := range verifying {
		if r.Verdict != report.Correct || len(r.Damage) > 0 {
			t.Errorf("verifying, %s: %s (%s), damage %q; want correct, no damage", cond, r.Verdict, r.VerdictWhy, r.Damage)
		}
	}
	stale := false
	for _, r := range shimCalls(vlogs["stale_read@get_shipment"]) {
		if r.Hit != nil && r.Hit.Fired {
			stale = r.Stdout == "R-101 shipment: \n" && r.State["shipment/R-101"] == "DHL"
		}
	}
	if !stale {
		t.Errorf("stale read: no read answered as not booked while R-101 was: %+v", shimCalls(vlogs["stale_read@get_shipment"]))
	}
}

// TestPortalAdapterBroken: an adapter that replies garbage, crashes or hangs gives the
// agent a clear error (exit 1, nothing run), a rejected row that says what went wrong,
// and a trial without a verdict; the record is whole, and a hung adapter's process group
// is ended.
func TestPortalAdapterBroken(t *testing.T) {
	testdata := filepath.Join(chaosbin.Root(), "tests", "shim", "testdata")
	cases := []struct {
		name, adapter, want string
	}{
		{"garbage", "garbage.sh", "sent a reply that is not the protocol's JSON object"},
		{"crash", "crash.sh", "exited (exit status 3) before answering; its stderr ends: adapter crashed: boom"},
		{"hang", "hang.sh", "did not answer within 3s (adapter_timeout)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, _, env := portal(t)
			pids := filepath.Join(t.TempDir(), "pids")
			text, err := os.ReadFile(filepath.Join(dir, "adapter.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			broken := "adapter: [sh, " + strconv.Quote(filepath.Join(testdata, tc.adapter)) + ", " + strconv.Quote(pids) + "]\n    adapter_timeout: 3s"
			spec := strings.ReplaceAll(string(text), "adapter: [python3, twin/adapter.py]", broken)
			if spec == string(text) {
				t.Fatal("adapter.yaml no longer names twin/adapter.py")
			}
			testkit.WriteFile(t, filepath.Join(dir, "broken.yaml"), spec)
			// Exit 4: no trial could be scored.
			rs, logs := runSpecExit(t, filepath.Join(dir, "broken.yaml"), env, "sh agents/blind.sh", 4, "clean")
			r, l := rs["clean"], logs["clean"]
			if r.Verdict != report.NoVerdict || !strings.HasPrefix(r.Reason, "the twin failed: the adapter of book_shipment") || !strings.Contains(r.Reason, tc.want) {
				t.Errorf("%s (%s), want no_verdict because the adapter %s", r.Verdict, r.Reason, tc.want)
			}
			calls := shimCalls(l)
			if len(calls) != 4 {
				t.Fatalf("%d shim rows, want the blind agent's 4 bookings: %+v", len(calls), calls)
			}
			for _, c := range calls {
				if c.Type != record.TypeRejected || c.Exit == nil || *c.Exit != 1 || !strings.HasPrefix(c.Stderr, "chaos shim: the adapter of book_shipment") ||
					!strings.HasPrefix(c.Reason, "adapter: ") || len(c.State) > 0 {
					t.Errorf("%q: %+v; want refused, exit 1, the adapter's failure on stderr, nothing stored", c.Argv, c)
				}
			}
			if l.End == nil {
				t.Errorf("the record has no session_end")
			}
			if tc.name == "hang" {
				b, _ := os.ReadFile(pids)
				for _, f := range strings.Fields(string(b)) {
					pid, _ := strconv.Atoi(f)
					if pid > 0 && syscall.Kill(pid, 0) == nil && !zombie(pid) {
						t.Errorf("the hung adapter's process %d is still running", pid)
						syscall.Kill(pid, syscall.SIGKILL)
					}
				}
				if len(strings.Fields(string(b))) != 2 {
					t.Errorf("the hung adapter wrote pids %q, want two", b)
				}
			}
		})
	}
}

// zombie says whether pid has ended and waits to be reaped (an orphan's parent may be
// this test process, when it is a child subreaper).
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] == 'Z' || s[i+2] == 'X'
}
