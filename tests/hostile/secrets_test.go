package hostile_test

// Issue 28 item 4: an agent that echoes every secret chaos handed it, and tools that
// repeat them, under a real chaos run; no byte chaos wrote holds one.

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/store/pgtest"
	"github.com/crashwall/chaos/tests/testkit"
)

// echoServer is an MCP server over stdio (newline-delimited JSON-RPC, in sh) whose one
// tool answers with the token its environment holds: a server that repeats its
// credential.
const echoServer = `while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
  pv=$(printf '%s' "$line" | sed -n 's/.*"protocolVersion":"\([^"]*\)".*/\1/p')
  case "$line" in
    *'"method":"initialize"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"%s","capabilities":{"tools":{}},"serverInfo":{"name":"echo","version":"1"}}}\n' "$id" "$pv";;
    *'"method":"tools/list"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"whoami","description":"Says which token the server runs with.","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}]}}\n' "$id";;
    *'"method":"tools/call"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"running with token %s"}]}}\n' "$id" "$SERVER_TOKEN";;
    *'"id":'*) printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id";;
  esac
done
`

// echoAgent echoes each secret it was handed, passes one as a tool argument, reads it
// back, calls the tools that repeat their credentials, calls its model with a key only
// the model proxy sees, and closes with a message holding the secret and a plain marker.
const echoAgent = `W="$1"; L="$2"
post() { curl -s -X POST -H 'Content-Type: application/json' "$W/tools/$1" -d "$2"; echo; }
echo "env key before any model call: $OPENAI_API_KEY" >&2
echo "my secret: $AGENT_SECRET"
echo "await page.fill('#password', '$BROWSER_PASSWORD');" >&2
post save_note "{\"value\":\"$AGENT_SECRET and $BROWSER_PASSWORD\"}"
post read_note '{}'
post whoami '{}'
post account '{}'
curl -s -H "Authorization: Bearer $CHAOS_T_MODELKEY" -H 'Content-Type: application/json' "$L/chat/completions" \
  -d '{"model":"standin","messages":[{"role":"user","content":"say done"}]}'
echo
echo "the key I sent my model: $CHAOS_T_MODELKEY" >&2
echo "Done: saved the note $AGENT_SECRET ($PLAIN_MARKER)."
`

// TestHostileSecretsEchoed plants a secret in each route chaos fills one in by (agent.env,
// a browser password typed through agent.env, a stdio server's env, a remote server's
// header, a model key in the worker's environment, a model key only the model proxy sees)
// and has the agent echo each to stdout or stderr, pass one as a tool argument and read it
// back, and call tools whose replies repeat the servers' credentials. It then reads every
// byte chaos wrote: the run folder, the data directory (Temporal's SQLite history and
// the logs), the work root, chaos run's own output, and the results database. No value
// is there; each one's marker is where it was echoed. A plain marker the agent prints is
// found in Temporal's database, so the search of it is honest.
func TestHostileSecretsEchoed(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	secrets := map[string]string{
		"CHAOS_T_AGENT":    testkit.RandomSecret("agent-"),
		"CHAOS_T_PASSWORD": "pw<&>" + testkit.RandomSecret("-"), // JSON and HTML escape it
		"CHAOS_T_SERVER":   testkit.RandomSecret("server-"),
		"CHAOS_T_HEADER":   testkit.RandomSecret("header-"),
		"OPENAI_API_KEY":   testkit.RandomSecret("sk-env-"),
		"CHAOS_T_MODELKEY": testkit.RandomSecret("sk-proxy-"),
	}
	plain := testkit.RandomSecret("plain-")
	// The servers and the model chaos reaches are the test's: their files are outside.
	outside := t.TempDir()
	inner := filepath.Join(outside, "inner.yaml")
	testkit.WriteFile(t, inner, `name: inner
task: Answer.
agent: {command: "true"}
tools:
  - {name: account, description: Says who is authorized., effect: none, reply: "authorized by `+secrets["CHAOS_T_HEADER"]+`"}
`)
	remote := testkit.Start(t, chaosBin, testkit.Env(t, "CHAOS_WALL_TOKEN="+secrets["CHAOS_T_HEADER"]),
		"wall", "--spec", inner, "--listen", "127.0.0.1:0", "--allow-remote")
	remoteURL := remote.WaitStderr(t, regexp.MustCompile(`MCP at (http://127\.0\.0\.1:\d+/mcp)`), testkit.StartTimeout)[1]
	script := filepath.Join(outside, "standin.yaml")
	testkit.WriteFile(t, script, "- when: start\n  text: done\n")
	standin := testkit.Start(t, chaosBin, nil, "model", "standin", "--script", script, "--listen", "127.0.0.1:0")
	standinURL := standin.WaitStdout(t, regexp.MustCompile(`(?m)^stand-in model: (http://\S+)$`), testkit.StartTimeout)[1]

	testkit.WriteFile(t, filepath.Join(w.specDir, "server.sh"), echoServer)
	testkit.WriteFile(t, filepath.Join(w.specDir, "agent.sh"), echoAgent)
	specPath := filepath.Join(w.specDir, "secrets.yaml")
	testkit.WriteFile(t, specPath, fmt.Sprintf(`name: secrets
task: Save the note.
agent:
  command: sh agent.sh {wall_url} {llm_url}
  env: {AGENT_SECRET: "${CHAOS_T_AGENT}", BROWSER_PASSWORD: "${CHAOS_T_PASSWORD}", PLAIN_MARKER: %q}
  timeout: 2m
workspace:
  files: [agent.sh]
model:
  upstream: ${CHAOS_T_STANDIN}/v1
tools:
  - {name: save_note, description: Saves the note., effect: write, key: note}
  - {name: read_note, description: Reads the note., effect: read, key: note}
servers:
  - name: local
    command: sh
    args: [%q]
    env: {SERVER_TOKEN: "${CHAOS_T_SERVER}"}
  - name: remote
    url: %s
    headers: {Authorization: "Bearer ${CHAOS_T_HEADER}"}
state_checks:
  - {key: note, matches: "."}
`, plain, filepath.Join(w.specDir, "server.sh"), remoteURL))

	pg := pgtest.Start(t)
	db := pg.CreateDatabase("results")
	env := append([]string{}, w.env...)
	for k, v := range secrets {
		env = append(env, k+"="+v)
	}
	env = append(env, "CHAOS_T_STANDIN="+standinURL)
	out := filepath.Join(w.tmp, "run")
	r := testkit.Run(t, chaosBin, env, 10*time.Minute, "run", specPath, "--only", "clean", "--out", out,
		"--results-db", db, "--results-calls")
	if r.Code != 0 && r.Code != 2 {
		t.Fatalf("chaos run: exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}

	// The routes were taken: the agent saw each value (the markers are where it echoed
	// them), and the servers answered with theirs.
	read := func(name string) string {
		files, _ := filepath.Glob(filepath.Join(out, "trials", "*", "clean", "1", name))
		if len(files) != 1 {
			t.Fatalf("trial %s files %v; want one", name, files)
		}
		b, _ := os.ReadFile(files[0])
		return string(b)
	}
	stdout, stderr, rec, result := read("stdout"), read("stderr"), read("record.jsonl"), read("result.json")
	for _, c := range []struct{ where, text, want string }{
		{"stdout", stdout, "my secret: [redacted:CHAOS_T_AGENT]"},
		{"stdout", stdout, "running with token [redacted:CHAOS_T_SERVER]"},
		{"stdout", stdout, "authorized by [redacted:CHAOS_T_HEADER]"},
		{"stdout", stdout, "Done: saved the note [redacted:CHAOS_T_AGENT] (" + plain + ")."},
		{"stderr", stderr, "env key before any model call: [redacted:OPENAI_API_KEY]"},
		{"stderr", stderr, "await page.fill('#password', '[redacted:CHAOS_T_PASSWORD]');"},
		{"stderr", stderr, "the key I sent my model: [redacted:MODEL_API_KEY]"},
		{"record.jsonl", rec, "[redacted:CHAOS_T_AGENT] and [redacted:CHAOS_T_PASSWORD]"},
		{"record.jsonl", rec, "running with token [redacted:CHAOS_T_SERVER]"},
		{"record.jsonl", rec, "authorized by [redacted:CHAOS_T_HEADER]"},
		{"result.json", result, "[redacted:CHAOS_T_AGENT]"},
	} {
		if !strings.Contains(c.text, c.want) {
			t.Errorf("%s lacks %q:\n%s", c.where, c.want, c.text)
		}
	}
	if !strings.Contains(stdout, `"done"`) {
		t.Errorf("the model was not reached through the proxy:\n%s", stdout)
	}

	// Every byte written: the test's folder holds the run folder, the data directory
	// (Temporal's SQLite history, the logs) and the work root.
	files, plainIn := 0, []string{}
	filepath.WalkDir(w.tmp, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		files++
		for name, v := range secrets {
			if bytes.Contains(b, []byte(v)) {
				t.Errorf("%s holds %s", p, name)
			}
		}
		if bytes.Contains(b, []byte(plain)) {
			plainIn = append(plainIn, p)
		}
		return nil
	})
	if files < 10 {
		t.Errorf("only %d files searched", files)
	}
	t.Logf("%d files searched; the plain marker is in %v", files, plainIn)
	// The search of Temporal's database finds what is there.
	if !strings.Contains(strings.Join(plainIn, "\n"), "temporal.db") {
		t.Errorf("the plain marker is in no file of Temporal's database (a search there proves nothing); found in:\n%s", strings.Join(plainIn, "\n"))
	}
	tables := pgtest.ResultsTables(t, db)
	if !strings.Contains(tables, "[redacted:CHAOS_T_AGENT]") {
		t.Errorf("the results database lacks the closing message's marker:\n%s", tables)
	}
	for name, v := range secrets {
		for what, text := range map[string]string{"chaos run stdout": r.Stdout, "chaos run stderr": r.Stderr, "the results database": tables} {
			if strings.Contains(text, v) {
				t.Errorf("%s holds %s", what, name)
			}
		}
	}
	w.check(t)
}
