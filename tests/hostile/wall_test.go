package hostile_test

// The wall-side items of issue 13 (4, 6, 8, 9, 10, 11), each run through the chaos
// binary with the exit code and message it must give, and the world's canary folder and
// process scan checked after.

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crashwall/chaos/proxies/mcpwall"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/tests/testkit"
)

// without is env with the named variables removed.
func without(env []string, names ...string) []string {
	var out []string
	for _, kv := range env {
		keep := true
		for _, n := range names {
			if strings.HasPrefix(kv, n+"=") {
				keep = false
			}
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}

// TestHostileWallRefusals: a wall beyond loopback, a port in use and a database password
// that is not there are each refused with exit 1 and a sentence, before anything is
// served or started.
func TestHostileWallRefusals(t *testing.T) {
	t.Parallel()
	busy := testkit.BusyAddr(t)
	_, busyPort, _ := net.SplitHostPort(busy)
	script := filepath.Join(t.TempDir(), "script.yaml")
	if err := os.WriteFile(script, []byte("- when: start\n  text: done\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const db = "postgres://u:${CHAOS_TEST_PW}@127.0.0.1:1/x"
	tests := []struct {
		name string
		args func(w *world) []string
		want string
	}{
		// item 4: the wall serves loopback only, unless told otherwise with a token
		{"wall --listen on every interface", func(w *world) []string {
			return []string{"wall", "--spec", testkit.ExampleSpec(), "--listen", "0.0.0.0:0"}
		}, `wall: listen on "0.0.0.0:0": not a loopback address: use 127.0.0.1:PORT, or pass --allow-remote with a bearer token in $CHAOS_WALL_TOKEN`},
		{"wall --listen on every interface, v6", func(w *world) []string {
			return []string{"wall", "--spec", testkit.ExampleSpec(), "--listen", "[::]:0"}
		}, "not a loopback address"},
		{"wall --allow-remote without a token", func(w *world) []string {
			return []string{"wall", "--spec", testkit.ExampleSpec(), "--listen", "0.0.0.0:0", "--allow-remote"}
		}, "--allow-remote needs a bearer token of at least 16 characters in $CHAOS_WALL_TOKEN"},
		// item 10: a port in use is bad input (1) for every command that listens
		{"wall --listen on a port in use", func(w *world) []string {
			return []string{"wall", "--spec", testkit.ExampleSpec(), "--listen", busy}
		}, "address already in use"},
		{"model standin --listen on a port in use", func(w *world) []string {
			return []string{"model", "standin", "--script", script, "--listen", busy}
		}, "address already in use"},
		{"server --port in use", func(w *world) []string {
			return []string{"server", "--data-dir", filepath.Join(w.tmp, "data-dir"), "--port", busyPort, "--ui-port", "-1"}
		}, "address already in use"},
		// item 11: the database password comes from the environment, never argv
		{"server --db with its password variable unset", func(w *world) []string {
			return []string{"server", "--data-dir", filepath.Join(w.tmp, "data-dir"), "--port", "0", "--ui-port", "-1", "--db", db}
		}, "--db: the database URL: the environment variable CHAOS_TEST_PW is not set"},
		{"server --results-db with its password variable unset", func(w *world) []string {
			return []string{"server", "--data-dir", filepath.Join(w.tmp, "data-dir"), "--port", "0", "--ui-port", "-1", "--results-db", db}
		}, "the environment variable CHAOS_TEST_PW is not set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			env := without(w.env, "CHAOS_TEST_PW", "CHAOS_WALL_TOKEN", "PGPASSWORD", "PGPASSFILE")
			r := testkit.Run(t, chaosBin, env, 2*time.Minute, tt.args(w)...)
			if r.Code != 1 {
				t.Errorf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
			}
			if !strings.Contains(r.Stderr, tt.want) {
				t.Errorf("stderr:\n%s\nwant it to contain %q", r.Stderr, tt.want)
			}
			w.check(t)
		})
	}
}

var listenLine = regexp.MustCompile(`^chaos wall: MCP at (http://127\.0\.0\.1:\d+)/mcp, REST at (http://127\.0\.0\.1:\d+)/tools\n`)

// TestHostileWallHTTP (item 4): requests a browser on another site can send without a
// preflight (another Host, a text/plain body, a cross-site Origin) are refused on REST
// as on /mcp, and none of them changes the world: a read afterwards and the record show
// it as it started.
func TestHostileWallHTTP(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rec := filepath.Join(w.tmp, "record.jsonl")
	p := testkit.Start(t, chaosBin, without(w.env, "CHAOS_WALL_TOKEN"), "wall", "--spec", testkit.ExampleSpec(), "--record", rec, "--listen", "127.0.0.1:0")
	base := p.WaitStderr(t, listenLine, testkit.StartTimeout)[2]
	client := &http.Client{Transport: &http.Transport{}}
	post := func(t *testing.T, path, host, ctype string, header map[string]string, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest("POST", base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			req.Host = host
		}
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	const write = `{"field":"priority","value":"low"}`
	crossSite := map[string]string{"Origin": "https://evil.example.com", "Sec-Fetch-Site": "cross-site"}
	tests := []struct {
		name, path, host, ctype string
		header                  map[string]string
		code                    int
		want                    string
	}{
		{"REST text/plain for another Host", "/tools/update_ticket", "evil.example.com", "text/plain", crossSite, 403, `invalid Host header \"evil.example.com\"`},
		{"REST text/plain for another Host, no Origin", "/tools/update_ticket", "evil.example.com", "text/plain", nil, 403, "invalid Host header"},
		{"REST text/plain", "/tools/update_ticket", "", "text/plain", nil, 415, "send the arguments as a JSON object with Content-Type: application/json"},
		{"REST form", "/tools/update_ticket", "", "application/x-www-form-urlencoded", nil, 415, "Content-Type"},
		{"REST no Content-Type", "/tools/update_ticket", "", "", nil, 415, "Content-Type"},
		{"REST JSON from a cross-site page", "/tools/update_ticket", "", "application/json", crossSite, 403, "cross-origin request refused"},
		{"MCP for another Host", "/mcp", "evil.example.com", "application/json", nil, 403, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := post(t, tt.path, tt.host, tt.ctype, tt.header, write)
			if code != tt.code || !strings.Contains(body, tt.want) {
				t.Errorf("%d %s; want %d and %q", code, body, tt.code, tt.want)
			}
		})
	}
	// The world is as it started: a read through the wall, then the record.
	for field, want := range map[string]string{"priority": "normal", "team": "accounts"} {
		code, body := post(t, "/tools/get_ticket_field", "", "application/json", nil, `{"field":"`+field+`"}`)
		if code != 200 || strings.TrimSpace(body) != `{"field":"`+field+`","value":"`+want+`"}` {
			t.Errorf("read %s after the refused writes: %d %s; want %s", field, code, body, want)
		}
	}
	// Its stdin (/dev/null) closed, the wall serves HTTP until a signal, then exits
	// 128+N after closing its record (docs/cli.md).
	p.Signal(t, syscall.SIGINT)
	if code := p.Wait(t, testkit.StopTimeout); code != 128+int(syscall.SIGINT) {
		t.Errorf("exit %d after SIGINT, want %d", code, 128+int(syscall.SIGINT))
	}
	l, err := record.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range l.Calls() {
		if c.Tool != "get_ticket_field" {
			t.Errorf("the record holds a call of %s (%s): a refused request reached a tool", c.Tool, c.Args)
		}
	}
	if l.End == nil || l.End.FinalState["priority"] != "normal" || l.End.FinalState["team"] != "accounts" || l.End.Calls != 2 {
		t.Errorf("session end %+v; want the initial state and the 2 reads", l.End)
	}
	w.check(t)
}

// TestHostileWallStdio (items 8, 9): a piped client writes its requests (one over the
// size limit, one with the id 2^70) and closes stdin at once: every request is answered
// with its id exactly as written, the wall exits 0, and the record holds every tool call
// and the session end.
func TestHostileWallStdio(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rec := filepath.Join(w.tmp, "record.jsonl")
	call := func(id, tool, args string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
	}
	requests := []struct {
		id, msg string
		err     string // "": a result
	}{
		{"1", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"hostile","version":"0"}}}`, ""},
		{"", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, ""},
		{"2", call("2", "read_email", `{}`), ""},
		{"3", call("3", "update_ticket", `{"field":"priority","value":"`+strings.Repeat("x", mcpwall.MaxMessageBytes)+`"}`),
			"message too large: more than " + strconv.Itoa(mcpwall.MaxMessageBytes) + " bytes"},
		{"1180591620717411303424", call("1180591620717411303424", "update_ticket", `{"field":"priority","value":"urgent"}`), ""},
		{"4", call("4", "update_ticket", `{"field":"team","value":"payments"}`), ""},
		{`"last"`, call(`"last"`, "get_ticket_field", `{"field":"team"}`), ""},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chaosBin, "wall", "--spec", testkit.ExampleSpec(), "--record", rec)
	cmd.Env = w.env
	cmd.WaitDelay = 5 * time.Second
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, stdout := testkit.StartPiped(t, cmd)
	wrote := make(chan error, 1)
	go func() {
		var err error
		for _, r := range requests {
			if _, err = io.WriteString(stdin, r.msg+"\n"); err != nil {
				break
			}
		}
		stdin.Close() // the half-close: nothing more will come
		wrote <- err
	}()
	type answer struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	answers := map[string][]answer{}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var a answer
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Errorf("the wall wrote %q: %v", sc.Text(), err)
			continue
		}
		answers[string(a.ID)] = append(answers[string(a.ID)], a)
	}
	if err := <-wrote; err != nil {
		t.Errorf("writing the requests: %v", err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("chaos wall: %v (want exit 0 when stdin closes)\nstderr:\n%s", err, stderr.String())
	}
	for _, r := range requests {
		if r.id == "" {
			continue
		}
		got := answers[r.id]
		switch {
		case len(got) != 1:
			t.Errorf("request %s was answered %d times, want once (answers by id: %v)", r.id, len(got), keys(answers))
		case r.err == "" && (got[0].Error != nil || got[0].Result == nil):
			t.Errorf("request %s: error %+v, want a result", r.id, got[0].Error)
		case r.err != "" && (got[0].Error == nil || !strings.Contains(got[0].Error.Message, r.err)):
			t.Errorf("request %s: error %+v, want one saying %q", r.id, got[0].Error, r.err)
		}
		delete(answers, r.id)
	}
	if len(answers) != 0 {
		t.Errorf("answers to ids nobody sent: %v", keys(answers))
	}
	l, err := record.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, c := range l.Calls() {
		tools = append(tools, c.Tool)
	}
	sort.Strings(tools)
	if strings.Join(tools, " ") != "get_ticket_field read_email update_ticket update_ticket" {
		t.Errorf("the record's calls are %v; want read_email, update_ticket twice and get_ticket_field", tools)
	}
	if l.End == nil || l.End.Reason != "client closed stdin" || l.End.Calls != 4 ||
		l.End.FinalState["priority"] != "urgent" || l.End.FinalState["team"] != "payments" {
		t.Errorf("session end %+v; want client closed stdin, 4 calls, priority urgent, team payments", l.End)
	}
	w.check(t)
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestHostileAgentEscapes (item 6): an agent that ignores SIGTERM and starts a process
// in a session of its own is killed at its timeout, and so is everything it started. The
// timeout is 20 s, not less: the agent's shell must have started its escaping process
// before it, and at a load of 30 on two cores a shell can take seconds to get there (a
// 2 s timeout failed the test on such a machine with nothing on the agent's stdout).
func TestHostileAgentEscapes(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	command := "trap '' TERM\nsetsid sleep " + w.marker + " &\necho \"escaped: $!\"\nsleep " + w.marker + "\n"
	yaml := "name: escape\ntask: wait\ntools: [{name: note, effect: write}]\n" +
		"agent: {command: " + yamlQuote(command) + ", timeout: 20s}\n"
	path := filepath.Join(w.specDir, "escape.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(w.tmp, "run")
	r := testkit.Run(t, chaosBin, w.env, 10*time.Minute, "run", path, "--only", "clean",
		"--data-dir", filepath.Join(w.tmp, "data-dir"), "--out", out)
	// The agent never meets the wall, so the run has no score (exit 4).
	if r.Code != 4 || !strings.Contains(r.Stderr, "could be scored") {
		t.Fatalf("exit %d, want 4 (no trial could be scored)\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	dir := filepath.Join(out, "trials", "main", "clean", "1")
	var res struct{ Outcome string }
	testkit.ReadJSON(t, filepath.Join(dir, "result.json"), &res)
	if res.Outcome != "timed_out" {
		t.Errorf("the trial's outcome is %q, want timed_out", res.Outcome)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "stdout")); !strings.Contains(string(b), "escaped: ") {
		t.Errorf("the agent's stdout %q does not show it started the escaping process", b)
	}
	w.check(t)
}
