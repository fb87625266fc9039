package upstream_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/probes"
	"github.com/crashwall/chaos/proxies/httpwall"
	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/proxies/upstream"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/spec"
)

// rig is one trial in this process: real servers behind a hub with one condition armed,
// served over streamable HTTP, and a real MCP client (the Go SDK's) connected to it.
//
//	Go SDK client ──MCP HTTP──> hub ──> Upstream ──> real npm server
//	probe ───────────────────────────> Upstream.CallTool ──┘ (never through the wall)
type rig struct {
	t       *testing.T
	sandbox string
	up      *upstream.Upstream
	hub     *hub.Hub
	srv     *httpwall.Server
	cs      *mcp.ClientSession
	record  string
}

// openRig reaches the spec's servers for a trial whose sandbox is a fresh folder and
// arms the condition with that id (a targeted call #N included).
func openRig(t *testing.T, s *spec.Spec, cond string) *rig {
	t.Helper()
	r := &rig{t: t, sandbox: t.TempDir()}
	if real, err := filepath.EvalSymlinks(r.sandbox); err == nil {
		r.sandbox = real // server-filesystem answers with resolved paths
	}
	ctx := context.Background()
	up, err := upstream.OpenUpstream(ctx, upstream.UpstreamConfig{Spec: s, Sandbox: r.sandbox})
	if err != nil {
		t.Fatal(err)
	}
	r.up = up
	conds, err := faults.Generate(up.Spec())
	if err != nil {
		up.Close()
		t.Fatal(err)
	}
	c, ok := faults.Find(conds, cond)
	if !ok {
		up.Close()
		t.Fatalf("no condition %s (have %v)", cond, faults.IDs(conds))
	}
	r.record = filepath.Join(t.TempDir(), "record.jsonl")
	rec, err := record.Open(r.record)
	if err != nil {
		t.Fatal(err)
	}
	if r.hub, err = hub.NewHub(hub.Config{Spec: up.Spec(), Condition: c, Seed: 11, Trial: t.Name(), Record: rec, Source: up}); err != nil {
		t.Fatal(err)
	}
	if r.srv, err = httpwall.Serve(r.hub, ""); err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "upstream-test", Version: "1"}, nil)
	if r.cs, err = client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: r.srv.MCPURL()}, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.close() })
	return r
}

// reply is what the client got.
type reply struct {
	text       string
	structured any
	isErr      bool
}

// call makes one call through the wall.
func (r *rig) call(tool string, args any) reply {
	r.t.Helper()
	res, err := r.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		r.t.Fatalf("%s %v: %v", tool, args, err)
	}
	out := reply{isErr: res.IsError}
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			out.text += tc.Text
		}
	}
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &out.structured)
	}
	return out
}

// direct calls a tool of a server directly, never through the wall (what a probe does).
func (r *rig) direct(server, tool string, args map[string]any) *mcp.CallToolResult {
	r.t.Helper()
	res, err := r.up.CallTool(context.Background(), server, tool, args)
	if err != nil {
		r.t.Fatalf("direct %s.%s: %v", server, tool, err)
	}
	return res
}

// probe runs an mcp probe on the real server.
func (r *rig) probe(server, tool string, args any, path string, want spec.StateCheck) probes.Result {
	r.t.Helper()
	raw, _ := json.Marshal(args)
	want.Key = path
	return probes.MCPCheck(context.Background(), r.up, spec.Probe{Kind: "mcp", Server: server, Tool: tool, Args: raw, Want: want})
}

// close ends the trial and returns its record.
func (r *rig) close() *record.Log {
	if r.cs != nil {
		r.cs.Close()
		r.cs = nil
	}
	if r.srv != nil {
		r.srv.Close()
		r.srv = nil
	}
	if r.hub != nil {
		r.hub.Close("test done")
		r.hub = nil
	}
	l, _ := record.ReadFile(r.record)
	return l
}

// calls are the call rows of the record, after the trial is closed.
func (r *rig) calls() []record.Row {
	r.t.Helper()
	l := r.close()
	if l == nil {
		r.t.Fatal("no record")
	}
	return l.Calls()
}

func equals(v any) spec.StateCheck      { return spec.StateCheck{Op: "equals", Equals: v} }
func contains(s string) spec.StateCheck { return spec.StateCheck{Op: "contains", Contains: s} }
func absent() spec.StateCheck           { return spec.StateCheck{Op: "absent", Absent: true} }

// jsonEqual says whether two JSON texts (or values) are the same JSON value.
func jsonEqual(a, b any) bool {
	norm := func(v any) any {
		var b []byte
		switch x := v.(type) {
		case string:
			b = []byte(x)
		default:
			b, _ = json.Marshal(x)
		}
		var out any
		if json.Unmarshal(b, &out) != nil {
			return v
		}
		return out
	}
	ja, _ := json.Marshal(norm(a))
	jb, _ := json.Marshal(norm(b))
	return string(ja) == string(jb)
}

// mustOK fails the test unless a probe found the world as wanted.
func mustOK(t *testing.T, what string, p probes.Result) {
	t.Helper()
	if !p.OK || p.NoVerdict != "" {
		t.Errorf("%s: %+v", what, p)
	}
}

// mustNot fails the test unless a probe found the world not as wanted.
func mustNot(t *testing.T, what string, p probes.Result) {
	t.Helper()
	if p.OK || p.NoVerdict != "" {
		t.Errorf("%s: %+v", what, p)
	}
}
