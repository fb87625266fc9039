package cdpwall

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/tests/testkit"
)

// raw sends text as it is on the agent's connection and waits for the answer to id.
func (c *conn) raw(ctx context.Context, id int64, text string) (message, error) {
	ch := make(chan message, 1)
	c.mu.Lock()
	c.waiting[id] = ch
	c.mu.Unlock()
	if err := c.ws.Write(ctx, websocket.MessageText, []byte(text)); err != nil {
		return message{}, err
	}
	select {
	case m := <-ch:
		return m, nil
	case <-ctx.Done():
		return message{}, ctx.Err()
	}
}

// envelope wraps a command in Target.sendMessageToTarget on session.
func envelope(id int64, session, inner string) string {
	b, _ := json.Marshal(map[string]any{"id": id, "method": "Target.sendMessageToTarget", "params": map[string]any{"sessionId": session, "message": inner}})
	return string(b)
}

// TestGuardEnvelopes: a denied method or click is denied whatever carries it to the
// browser, a way past the guard is refused, and a message the guard cannot read as the
// browser would is refused rather than passed on.
func TestGuardEnvelopes(t *testing.T) {
	f := start(t, "clean")
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	box := f.eval(t, `JSON.stringify(document.getElementById('reset').getBoundingClientRect())`)
	var r struct{ X, Y, Width, Height float64 }
	json.Unmarshal([]byte(box), &r)
	press := fmt.Sprintf(`{"id":7,"method":"Input.dispatchMouseEvent","params":{"type":"mousePressed","x":%g,"y":%g,"button":"left","clickCount":1}}`, r.X+r.Width/2, r.Y+r.Height/2)
	pdf := `{"id":7,"method":"Page.printToPDF","params":{}}`
	for i, c := range []struct{ name, text, want string }{
		{"a denied method in Target.sendMessageToTarget", envelope(0, f.sess, pdf),
			"denied method Page.printToPDF (browser.deny_methods: Page.printToPDF) (carried in Target.sendMessageToTarget)"},
		{"a denied method two envelopes deep", envelope(0, f.sess, envelope(8, f.sess, pdf)),
			"denied method Page.printToPDF (browser.deny_methods: Page.printToPDF) (carried in Target.sendMessageToTarget) (carried in Target.sendMessageToTarget)"},
		{"envelopes five deep", envelope(0, f.sess, envelope(1, f.sess, envelope(2, f.sess, envelope(3, f.sess, envelope(4, f.sess, `{"id":5,"method":"Page.enable"}`))))),
			"Target.sendMessageToTarget nested more than 4 deep"},
		{"a denied click in Target.sendMessageToTarget", envelope(0, f.sess, press),
			`denied click on "Delete all" (browser.deny_clicks: Delete*) (carried in Target.sendMessageToTarget)`},
		{"an envelope whose message is not a command", envelope(0, f.sess, `[1]`),
			"Target.sendMessageToTarget carrying a CDP message must be a JSON object is refused"},
		{"an envelope with its message twice", `{"id":0,"method":"Target.sendMessageToTarget","params":{"sessionId":"` + f.sess + `","message":"{\"id\":1,\"method\":\"Page.enable\"}","Message":` + strconvQuote(pdf) + `}}`,
			"Target.sendMessageToTarget whose message the guard cannot read"},
		{"Target.exposeDevToolsProtocol", `{"id":0,"method":"Target.exposeDevToolsProtocol","params":{"targetId":"x"}}`,
			"Target.exposeDevToolsProtocol is refused: it would give the page's script a CDP channel"},
		{"Target.exposeDevToolsProtocol in an envelope", envelope(0, f.sess, `{"id":1,"method":"Target.exposeDevToolsProtocol","params":{"targetId":"x"}}`),
			"Target.exposeDevToolsProtocol is refused"},
		{"Target.openDevTools", `{"id":0,"method":"Target.openDevTools","params":{"targetId":"x"}}`,
			"Target.openDevTools is refused"},
		{"a DevTools page", `{"id":0,"method":"Page.navigate","sessionId":"` + f.sess + `","params":{"url":"devtools://devtools/bundled/inspector.html?ws=127.0.0.1:1/devtools/browser"}}`,
			"Page.navigate is refused: a DevTools page (devtools://) speaks CDP to the browser past the guard"},
		{"a DevTools tab", `{"id":0,"method":"Target.createTarget","params":{"url":" DevTools://devtools/bundled/inspector.html"}}`,
			"Target.createTarget is refused: a DevTools page (devtools://)"},
		{"a DevTools page in an envelope", envelope(0, f.sess, `{"id":1,"method":"Page.navigate","params":{"url":"chrome-devtools://devtools/bundled/inspector.html"}}`),
			"Page.navigate is refused: a DevTools page (chrome-devtools://) speaks CDP to the browser past the guard (carried in Target.sendMessageToTarget)"},
		{"the browser's own page", `{"id":0,"method":"Page.navigate","sessionId":"` + f.sess + `","params":{"url":"chrome://settings"}}`,
			"Page.navigate is refused: the browser's own pages (chrome://) drive the browser"},
		{"method in another case beside it", `{"id":0,"method":"Page.printToPDF","Method":"Page.enable","sessionId":"` + f.sess + `"}`,
			`a CDP message whose "Method" the guard cannot read`},
		{"method twice", `{"id":0,"method":"Page.enable","method":"Page.printToPDF","sessionId":"` + f.sess + `"}`,
			`a CDP message with the key "method" twice is refused`},
		{"a mouse event's type twice", fmt.Sprintf(`{"id":0,"method":"Input.dispatchMouseEvent","sessionId":%q,"params":{"type":"mousePressed","TYPE":"mouseMoved","x":%g,"y":%g}}`, f.sess, r.X+r.Width/2, r.Y+r.Height/2),
			"a mouse event the guard cannot read"},
		{"no method", `{"id":0,"params":{}}`, "a CDP message with no method is refused"},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := int64(1_000_000 + i)
			text := strings.Replace(c.text, `"id":0`, fmt.Sprintf(`"id":%d`, id), 1)
			m, err := f.client.raw(ctx, id, text)
			if err != nil {
				t.Fatal(err)
			}
			if m.Error == nil || !strings.Contains(m.Error.Message, c.want) {
				t.Errorf("answer %+v %s\nwant an error saying %q", m.Error, m.Result, c.want)
			}
		})
	}
	// What was refused is in the record, and the guard still holds the browser.
	var reasons []string
	for _, r := range f.rows(t) {
		if r.Type == record.TypeRejected {
			reasons = append(reasons, r.Reason)
		}
	}
	if all := strings.Join(reasons, "\n"); !strings.Contains(all, "(carried in Target.sendMessageToTarget)") {
		t.Errorf("no rejected row names the envelope:\n%s", all)
	}
	if f.site.Resets() != 0 {
		t.Error("the denied click reached the site")
	}
	if lost := f.guard.Lost(); lost != "" {
		t.Errorf("the guard lost the browser: %s", lost)
	}
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// TestGuardPlaywrightClick: a Playwright agent's click on a denied element fails at once
// with the rule that denied it, not Playwright's timeout; a click on an allowed element
// still works.
func TestGuardPlaywrightClick(t *testing.T) {
	node := testkit.Node(t, "playwright-core")
	f := startWith(t, "clean", strings.Replace(browserSpec, `, "Browser.setDownloadBehavior"`, "", 1))
	click := func(selector string) string {
		out, err := exec.Command(node, filepath.Join("testdata", "click.mjs"), testkit.JSDir(), f.guard.URL(), f.site.URL+"/", selector).CombinedOutput()
		if err != nil {
			t.Fatalf("click.mjs %s: %v\n%s", selector, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	got := click("#reset")
	t.Logf("Playwright: %s", got)
	if !strings.HasPrefix(got, "ERROR Error: ") || !strings.Contains(got, `chaos: denied click on "Delete all" (browser.deny_clicks: Delete*)`) {
		t.Errorf("Playwright's click on Delete all: %s\nwant an Error (not a TimeoutError) naming the rule", got)
	}
	if f.site.Resets() != 0 {
		t.Error("the denied click reached the site")
	}
	if got := click("#save"); got != "CLICKED" {
		t.Errorf("Playwright's click on Save: %s", got)
	}
}
