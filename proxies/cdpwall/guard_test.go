package cdpwall

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/tests/browser/site"
	testfixture "github.com/crashwall/chaos/tests/fixture" // this package has a fixture type of its own
)

// The guard in front of Debian's Chromium, driven over CDP through {cdp_url} by a raw CDP
// client (the guard's own conn type), against the test site: what the page got, what
// reached the site and what the record says.

const hangGuard = 15 * time.Minute

// secretPassword is typed into the form's password field: no record may hold it.
const secretPassword = "hunter2-d0-not-record-me"

const browserSpec = `
name: browser-guard
task: save a contact
agent:
  command: "true"
browser:
  intercept: ["%[1]s/api/*"]
  allow_writes: ["%[1]s/api/*"]
  deny_methods: ["Page.printToPDF", "Browser.setDownloadBehavior"]
  deny_clicks: ["Delete*"]
`

type fixture struct {
	site   *site.Site
	guard  *Guard
	hub    *hub.Hub
	rec    string
	client *conn
	sess   string
	lost   chan string
	chrome *Chromium
}

func start(t *testing.T, condition string) *fixture {
	t.Helper()
	return startWith(t, condition, browserSpec)
}

// startWith is start with another spec (its %[1]s the test site's URL).
func startWith(t *testing.T, condition, specText string) *fixture {
	t.Helper()
	if os.Getenv("CDPWALL_DEBUG") != "" {
		debugf = t.Logf
	}
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	t.Cleanup(cancel)
	st, err := site.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s, err := spec.Parse("browser.yaml", []byte(fmt.Sprintf(specText, st.URL)))
	if err != nil {
		t.Fatal(err)
	}
	conds, err := faults.Generate(s)
	if err != nil {
		t.Fatal(err)
	}
	cond, ok := faults.Find(conds, condition)
	if !ok {
		t.Fatalf("no condition %q in %v", condition, faults.IDs(conds))
	}
	recPath := filepath.Join(t.TempDir(), "record.jsonl")
	w, err := record.Open(recPath)
	if err != nil {
		t.Fatal(err)
	}
	h, err := hub.NewHub(hub.Config{Spec: s, Condition: cond, Seed: 7, Trial: "t", Record: w})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close("test over") })
	chrome, err := LaunchChromium(ctx, "", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { chrome.Close() })
	lost := make(chan string, 1)
	g, err := Start(ctx, Config{Hub: h, Browser: chrome.HTTP, Rules: s.Browser, Condition: cond, Seed: 7,
		OnLost: func(r string) { lost <- r }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })

	// The agent's side: /json/version names the guard, not the browser.
	var v struct {
		WS string `json:"webSocketDebuggerUrl"`
	}
	if err := getJSON(ctx, g.URL()+"/json/version", &v); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(v.WS, "ws://"+strings.TrimPrefix(g.URL(), "http://")+"/devtools/browser/") {
		t.Fatalf("/json/version's webSocketDebuggerUrl %q does not point at the guard %s", v.WS, g.URL())
	}
	c, err := dialConn(ctx, v.WS)
	if err != nil {
		t.Fatal(err)
	}
	go c.run(context.Background(), func(message) {})
	t.Cleanup(c.close)
	_, sess := openTab(ctx, t, c, st.URL+"/")
	// A tab in the background gets no frames, and so no input: bring it to the front.
	if err := c.call(ctx, sess, "Page.bringToFront", map[string]any{}, nil); err != nil {
		t.Fatal(err)
	}
	f := &fixture{site: st, guard: g, hub: h, rec: recPath, client: c, sess: sess, lost: lost, chrome: chrome}
	testfixture.Eventually(t, "the test site's page to load", func() bool {
		return f.eval(t, `document.body && document.body.dataset.loaded || ""`) == "1"
	})
	return f
}

// eval runs an expression in the page (awaiting a promise) and returns its value as text.
func (f *fixture) eval(t *testing.T, expr string) string {
	t.Helper()
	var res struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
	}
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	if err := f.client.call(ctx, f.sess, "Runtime.evaluate", map[string]any{"expression": expr, "awaitPromise": true, "returnByValue": true}, &res); err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return fmt.Sprint(res.Result.Value)
}

// save fills the form and presses Save (the page's own script), and returns the status
// the page shows.
func (f *fixture) save(t *testing.T, name string) string {
	t.Helper()
	return f.eval(t, fmt.Sprintf(`(async () => {
		document.getElementById('name').value = %q;
		document.getElementById('email').value = 'a@example.org';
		document.getElementById('password').value = %q;
		await saveRecord();
		return document.getElementById('status').textContent;
	})()`, name, secretPassword))
}

func (f *fixture) rows(t *testing.T) []record.Row {
	t.Helper()
	b, err := os.ReadFile(f.rec)
	if err != nil {
		t.Fatal(err)
	}
	var out []record.Row
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r record.Row
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("record line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

func writeRows(rows []record.Row) []record.Row {
	var out []record.Row
	for _, r := range rows {
		if r.Type == record.TypeCall && r.Transport == Transport && strings.Contains(string(r.Args), `"POST"`) {
			out = append(out, r)
		}
	}
	return out
}

func TestGuardFaults(t *testing.T) {
	for _, tc := range []struct {
		cond    string
		saves   int      // how many times the page saves
		status  []string // what the page shows after each
		records int      // records the site holds after
		fired   bool
	}{
		{"clean", 1, []string{"Saved"}, 1, false},
		{"phantom_success@browser", 1, []string{"Saved"}, 0, true},
		{"transient_error@browser", 2, []string{"Error 503", "Saved"}, 1, true},
		{"phantom_failure@browser", 2, []string{"Error 500", "Saved"}, 2, true},
		{"session_drop@browser", 2, []string{"Saved", "Error 401"}, 1, true},
	} {
		t.Run(tc.cond, func(t *testing.T) {
			f := start(t, tc.cond)
			for i := range tc.saves {
				if got := f.save(t, "Ada"); got != tc.status[i] {
					t.Fatalf("save #%d: the page shows %q, want %q", i+1, got, tc.status[i])
				}
			}
			if got := len(f.site.Records()); got != tc.records {
				t.Fatalf("the site holds %d records, want %d", got, tc.records)
			}
			// Every write the page sent is in the record, with the answer the page got.
			rows := writeRows(f.rows(t))
			if len(rows) != tc.saves {
				t.Fatalf("the record has %d write rows, want %d: %+v", len(rows), tc.saves, rows)
			}
			fired := false
			for i, r := range rows {
				if want := tc.status[i]; (want == "Saved") != (r.Status < 400) {
					t.Errorf("write #%d recorded with status %d, the page showed %q", i+1, r.Status, want)
				}
				if r.Hit != nil && r.Hit.Fired {
					fired = true
				}
			}
			if fired != tc.fired {
				t.Errorf("a fired fault in the record: %v, want %v", fired, tc.fired)
			}
			if tc.cond == "phantom_failure@browser" && !strings.Contains(rows[0].RealReply, "201") {
				t.Errorf("phantom failure's real answer not recorded: %q", rows[0].RealReply)
			}
			if st := f.hub.Stats(); tc.fired != (st.Fired > 0) {
				t.Errorf("hub counts %d fired faults", st.Fired)
			}
			// The password typed into the form is in no row.
			b, _ := os.ReadFile(f.rec)
			if strings.Contains(string(b), secretPassword) {
				t.Fatalf("the record holds the password:\n%s", b)
			}
			if !strings.Contains(string(b), "[secret: ") {
				t.Errorf("the save's body is not recorded as a secret's length:\n%s", b)
			}
		})
	}
}

func TestGuardRules(t *testing.T) {
	f := start(t, "clean")
	ctx := context.Background()

	// A denied method is answered with an error and recorded.
	err := f.client.call(ctx, f.sess, "Page.printToPDF", map[string]any{}, nil)
	if err == nil || !strings.Contains(err.Error(), "denied method Page.printToPDF") {
		t.Fatalf("Page.printToPDF: %v, want a denial", err)
	}
	// A write to a URL not allowed is blocked as the browser blocks a request a client
	// refused, and never reaches the site.
	if got := f.eval(t, `deleteAll().then(() => document.getElementById('status').textContent)`); got != "Error network" {
		t.Fatalf("the denied write: the page shows %q, want the network error of a blocked request", got)
	}
	if f.site.Resets() != 0 {
		t.Fatal("the denied write reached the site")
	}
	// A click on "Delete all" is denied; a click on Save goes through.
	click := func(id string) error {
		box := f.eval(t, fmt.Sprintf(`JSON.stringify(document.getElementById(%q).getBoundingClientRect())`, id))
		var r struct{ X, Y, Width, Height float64 }
		json.Unmarshal([]byte(box), &r)
		x, y := r.X+r.Width/2, r.Y+r.Height/2
		for _, typ := range []string{"mousePressed", "mouseReleased"} {
			if err := f.client.call(ctx, f.sess, "Input.dispatchMouseEvent", map[string]any{"type": typ, "x": x, "y": y, "button": "left", "clickCount": 1}, nil); err != nil {
				return err
			}
		}
		return nil
	}
	if err := click("reset"); err == nil || !strings.Contains(err.Error(), `denied click on "Delete all"`) {
		t.Fatalf("click on Delete all: %v, want a denial", err)
	}
	f.eval(t, `document.getElementById('name').value = 'Bob'`)
	if err := click("save"); err != nil {
		t.Fatalf("click on Save: %v", err)
	}
	if !testfixture.Until(t, 0, func() bool { return len(f.site.Records()) == 1 }) {
		t.Fatalf("the click on Save saved nothing: the page shows %q; the site got %v", f.eval(t, `document.getElementById('status').textContent`), f.site.Requests())
	}

	// The agent's own interception may not rewrite a request the guard checked.
	err = f.client.call(ctx, f.sess, "Fetch.continueRequest", map[string]any{"requestId": "interception-job-1.0", "url": "http://127.0.0.1:1/elsewhere"}, nil)
	if err == nil || !strings.Contains(err.Error(), "may not rewrite a request's url") {
		t.Fatalf("Fetch.continueRequest with a url: %v, want a denial", err)
	}
	// Browser.close ends the agent's connection; the trial's browser stays, guarded.
	if err := f.client.call(ctx, "", "Browser.close", map[string]any{}, nil); err != nil {
		t.Fatalf("Browser.close: %v", err)
	}
	<-f.client.done
	if lost := f.guard.Lost(); lost != "" {
		t.Fatalf("the guard lost the browser after the agent's Browser.close: %s", lost)
	}
	var v struct {
		Browser string `json:"Browser"`
	}
	if err := getJSON(ctx, f.guard.URL()+"/json/version", &v); err != nil || v.Browser == "" {
		t.Fatalf("the browser is gone after the agent's Browser.close: %v", err)
	}

	var reasons []string
	for _, r := range f.rows(t) {
		if r.Type == record.TypeRejected {
			reasons = append(reasons, r.Reason)
		}
	}
	all := strings.Join(reasons, "\n")
	for _, want := range []string{"denied method Page.printToPDF", "denied write: POST", `denied click on "Delete all"`, "may not rewrite", "Browser.close: the agent's connection was closed"} {
		if !strings.Contains(all, want) {
			t.Errorf("no rejected row says %q; rejected rows:\n%s", want, all)
		}
	}
}

// TestGuardLost kills the browser mid-trial: the guard says guard_lost, cuts the agent's
// connection and refuses new ones; nothing reaches the site after.
func TestGuardLost(t *testing.T) {
	f := start(t, "clean")
	if got := f.save(t, "Ada"); got != "Saved" {
		t.Fatalf("first save: %q", got)
	}
	before := f.site.Writes()
	f.chrome.Close()
	select {
	case why := <-f.lost:
		if why == "" {
			t.Fatal("guard lost with no reason")
		}
	case <-time.After(hangGuard):
		t.Fatal("the guard never noticed the browser was gone")
	}
	if f.guard.Lost() == "" {
		t.Fatal("Lost() is empty after the browser died")
	}
	if err := f.client.call(context.Background(), f.sess, "Runtime.evaluate", map[string]any{"expression": "saveRecord()"}, nil); err == nil {
		t.Fatal("the agent's connection still answers after the guard lost the browser")
	}
	if f.site.Writes() != before {
		t.Fatal("a write reached the site after the guard lost the browser")
	}
	found := false
	for _, r := range f.rows(t) {
		if r.Type == record.TypeError && strings.HasPrefix(r.Reason, GuardLost+": ") {
			found = true
		}
	}
	if !found {
		t.Fatal("no guard_lost row in the record")
	}
}

// openTab opens url in a new tab over c and attaches to it (a flat session): the tab's
// target id and session id.
func openTab(ctx context.Context, tb testing.TB, c *conn, url string) (target, session string) {
	tb.Helper()
	var created struct {
		TargetID string `json:"targetId"`
	}
	if err := c.call(ctx, "", "Target.createTarget", map[string]any{"url": url}, &created); err != nil {
		tb.Fatal(err)
	}
	var att struct {
		SessionID string `json:"sessionId"`
	}
	if err := c.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": created.TargetID, "flatten": true}, &att); err != nil {
		tb.Fatal(err)
	}
	return created.TargetID, att.SessionID
}
