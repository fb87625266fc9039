package upstream_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/proxies/upstream"
	"github.com/crashwall/chaos/spec"
)

// Every fault family against each real server, through the wall, with the Go SDK as the
// client. Fabricating families (phantom success, transient and permanent errors, session
// drop) must never reach the server, which the server's own state shows; damaging ones
// (truncated, premature, stale, anomaly) forward and damage the reply, structured
// content included; phantom failure forwards and answers failure.

var (
	alice = map[string]any{"entities": []any{map[string]any{"name": "Alice", "entityType": "person", "observations": []any{"likes tea"}}}}
	bob   = map[string]any{"entities": []any{map[string]any{"name": "Bob", "entityType": "person", "observations": []any{"likes maps"}}}}
)

func memorySpec(t *testing.T) *spec.Spec {
	sv := memoryServer(t)
	// read_graph as a source with a known reply, so the data anomalies have records to work on.
	sv.Tools = map[string]spec.ServerTool{"search_nodes": {Effect: spec.EffectNone, Reply: `{"entities":[{"name":"Zed","entityType":"person","observations":[]}],"relations":[]}`}}
	return &spec.Spec{Name: "memory", Tasks: []spec.Task{{ID: "t", Prompt: "remember Alice"}}, Servers: []spec.Server{sv}}
}

// entity probes server-memory for an entity, directly.
func entity(r *rig, name string) bool {
	p := r.probe("memory", "open_nodes", map[string]any{"names": []string{name}}, "$.entities[0].name", equals(name))
	if p.NoVerdict != "" {
		r.t.Fatalf("probe: %s", p.NoVerdict)
	}
	return p.OK
}

func TestMemoryFaults(t *testing.T) {
	tests := []struct {
		cond string
		play func(t *testing.T, r *rig)
	}{
		{"clean", func(t *testing.T, r *rig) {
			got := r.call("create_entities", alice)
			if got.isErr || !jsonEqual(got.structured, alice) {
				t.Errorf("create_entities: %+v", got)
			}
			if !entity(r, "Alice") {
				t.Error("Alice is not in the graph")
			}
		}},
		{"phantom_success@create_entities#2", func(t *testing.T, r *rig) {
			r.call("create_entities", bob)
			got := r.call("create_entities", alice)
			// What the real server answers for a new entity: the entities it created.
			want, _ := json.MarshalIndent(alice["entities"], "", "  ")
			if got.isErr || !jsonEqual(got.text, string(want)) || !strings.Contains(got.text, "\n  ") || !jsonEqual(got.structured, alice) {
				t.Errorf("fabricated reply %+v, want the real shape for Alice (text and structured content)", got)
			}
			if entity(r, "Alice") || !entity(r, "Bob") {
				t.Error("the fabricated create reached the server (or the real one did not)")
			}
			rows := r.calls()
			if h := rows[1].Hit; h == nil || !h.Fired || h.Performed || h.Family != "phantom_success" {
				t.Errorf("record: %+v", rows[1].Hit)
			}
		}},
		{"phantom_failure@create_entities", func(t *testing.T, r *rig) {
			if got := r.call("create_entities", alice); !got.isErr || got.text != `{"error":"`+faults.TextWriteFailed+`"}` {
				t.Errorf("reply %+v, want the write-failed error", got)
			}
			if !entity(r, "Alice") {
				t.Error("the write was not performed")
			}
		}},
		{"transient_error@create_entities", func(t *testing.T, r *rig) {
			if got := r.call("create_entities", alice); !got.isErr || !strings.Contains(got.text, "503") {
				t.Errorf("reply %+v, want a 503", got)
			}
			if entity(r, "Alice") {
				t.Error("the failed call reached the server")
			}
			if got := r.call("create_entities", alice); got.isErr || !entity(r, "Alice") {
				t.Errorf("the retry did not go through: %+v", got)
			}
		}},
		{"permanent_error@create_entities", func(t *testing.T, r *rig) {
			for range 2 {
				if got := r.call("create_entities", alice); !got.isErr {
					t.Errorf("reply %+v, want a 503", got)
				}
			}
			if entity(r, "Alice") {
				t.Error("a failed call reached the server")
			}
		}},
		{"session_drop@create_entities", func(t *testing.T, r *rig) {
			if got := r.call("create_entities", alice); got.isErr {
				t.Errorf("first write: %+v", got)
			}
			if got := r.call("create_entities", bob); !got.isErr || !strings.Contains(got.text, "401") {
				t.Errorf("second write: %+v, want a 401", got)
			}
			if got := r.call("read_graph", map[string]any{}); !got.isErr {
				t.Errorf("read after the drop: %+v, want a 401", got)
			}
			if !entity(r, "Alice") || entity(r, "Bob") {
				t.Error("the world should keep the write before the drop and nothing after")
			}
		}},
		{"truncated_reply@read_graph", func(t *testing.T, r *rig) {
			r.call("create_entities", alice)
			got := r.call("read_graph", map[string]any{})
			if got.isErr || json.Valid([]byte(got.text)) || got.structured != nil || !strings.HasPrefix(got.text, "{") {
				t.Errorf("reply %+v, want the text cut mid-structure and no structured content", got)
			}
			if !entity(r, "Alice") {
				t.Error("the world changed")
			}
		}},
		{"premature_read@read_graph", func(t *testing.T, r *rig) {
			r.call("create_entities", alice)
			got := r.call("read_graph", map[string]any{})
			empty := map[string]any{"entities": []any{}, "relations": []any{}}
			if got.isErr || !jsonEqual(got.text, empty) || !jsonEqual(got.structured, empty) {
				t.Errorf("reply %+v, want every field emptied, structured content too", got)
			}
			if !entity(r, "Alice") {
				t.Error("the world changed")
			}
		}},
		{"stale_read@open_nodes#2", func(t *testing.T, r *rig) {
			r.call("create_entities", alice)
			open := map[string]any{"names": []string{"Alice"}}
			r.call("open_nodes", open)
			r.call("add_observations", map[string]any{"observations": []any{map[string]any{"entityName": "Alice", "contents": []string{"likes coffee"}}}})
			got := r.call("open_nodes", open)
			if got.isErr || strings.Contains(got.text, "coffee") || !strings.Contains(got.text, "tea") || strings.Contains(mustJSON(got.structured), "coffee") {
				t.Errorf("reply %+v, want Alice as she was before the last write", got)
			}
			mustOK(t, "the real graph", r.probe("memory", "open_nodes", open, "$.entities[0].observations", contains("likes coffee")))
		}},
		{"data_anomaly.duplicate_record@search_nodes", func(t *testing.T, r *rig) {
			r.call("create_entities", alice)
			got := r.call("search_nodes", map[string]any{"query": "Alice"})
			var g struct{ Entities []map[string]any }
			json.Unmarshal([]byte(got.text), &g)
			if got.isErr || len(g.Entities) != 2 || g.Entities[0]["name"] != "Alice" || g.Entities[1]["name"] != "Alice" {
				t.Errorf("reply %+v, want Alice twice", got)
			}
			mustOK(t, "the real search", r.probe("memory", "search_nodes", map[string]any{"query": "Alice"}, "$.entities[1]", absent()))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.cond, func(t *testing.T) {
			tt.play(t, openRig(t, memorySpec(t), tt.cond))
		})
	}
	t.Run("families that need the simulated world are not offered", func(t *testing.T) {
		s, _, err := upstream.Discover(t.Context(), memorySpec(t), upstream.UpstreamConfig{})
		if err != nil {
			t.Fatal(err)
		}
		conds, _ := faults.Generate(s)
		for _, c := range conds {
			if c.Family == "context_switch" || c.Family == "empty_success" {
				t.Errorf("%s offered for a real server", c.ID)
			}
		}
	})
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func filesystemSpec(t *testing.T) *spec.Spec {
	return &spec.Spec{Name: "files", Tasks: []spec.Task{{ID: "t", Prompt: "write notes"}}, Servers: []spec.Server{filesystemServer(t)}}
}

func TestFilesystemFaults(t *testing.T) {
	write := func(r *rig, name, content string) reply {
		return r.call("write_file", map[string]any{"path": filepath.Join(r.sandbox, name), "content": content})
	}
	read := func(r *rig, name string) reply {
		return r.call("read_text_file", map[string]any{"path": filepath.Join(r.sandbox, name)})
	}
	// onDisk is the file as the server's filesystem holds it ("" and false when absent).
	onDisk := func(r *rig, name string) (string, bool) {
		b, err := os.ReadFile(filepath.Join(r.sandbox, name))
		return string(b), err == nil
	}
	tests := []struct {
		cond string
		play func(t *testing.T, r *rig)
	}{
		{"clean", func(t *testing.T, r *rig) {
			if got := write(r, "a.txt", "hello"); got.isErr {
				t.Errorf("write: %+v", got)
			}
			mustOK(t, "read back", r.probe("fs", "read_text_file", map[string]any{"path": filepath.Join(r.sandbox, "a.txt")}, "$.content", equals("hello")))
		}},
		{"phantom_success@write_file#2", func(t *testing.T, r *rig) {
			first := write(r, "a.txt", "one")
			got := write(r, "b.txt", "two")
			wantText := strings.ReplaceAll(first.text, "a.txt", "b.txt")
			if got.isErr || got.text != wantText || !jsonEqual(got.structured, map[string]any{"content": wantText}) {
				t.Errorf("fabricated %+v, want %q (the real success, for b.txt)", got, wantText)
			}
			if _, ok := onDisk(r, "b.txt"); ok {
				t.Error("the fabricated write reached the disk")
			}
			mustOK(t, "the server cannot read it", r.probe("fs", "read_text_file", map[string]any{"path": filepath.Join(r.sandbox, "b.txt")}, "$.content", absent()))
		}},
		{"phantom_success@write_file", func(t *testing.T, r *rig) {
			if got := write(r, "a.txt", "one"); got.isErr || got.text != `{"ok": true}` {
				t.Errorf("fabricated %+v, want {\"ok\": true} with no success seen yet", got)
			}
			if _, ok := onDisk(r, "a.txt"); ok {
				t.Error("the fabricated write reached the disk")
			}
		}},
		{"phantom_failure@write_file", func(t *testing.T, r *rig) {
			if got := write(r, "a.txt", "one"); !got.isErr {
				t.Errorf("reply %+v, want a failure", got)
			}
			if got, ok := onDisk(r, "a.txt"); !ok || got != "one" {
				t.Error("the write was not performed")
			}
		}},
		{"transient_error@write_file", func(t *testing.T, r *rig) {
			if got := write(r, "a.txt", "one"); !got.isErr {
				t.Errorf("reply %+v, want a 503", got)
			}
			if _, ok := onDisk(r, "a.txt"); ok {
				t.Error("the failed write reached the disk")
			}
		}},
		{"session_drop@write_file", func(t *testing.T, r *rig) {
			write(r, "a.txt", "one")
			if got := write(r, "b.txt", "two"); !got.isErr || !strings.Contains(got.text, "401") {
				t.Errorf("second write %+v, want a 401", got)
			}
			_, a := onDisk(r, "a.txt")
			_, b := onDisk(r, "b.txt")
			if !a || b {
				t.Errorf("on disk: a.txt %v, b.txt %v; want only a.txt", a, b)
			}
		}},
		{"permanent_error@read_text_file", func(t *testing.T, r *rig) {
			write(r, "a.txt", "one")
			for range 2 {
				if got := read(r, "a.txt"); !got.isErr {
					t.Errorf("read %+v, want a 503", got)
				}
			}
		}},
		{"truncated_reply@read_text_file", func(t *testing.T, r *rig) {
			write(r, "a.txt", "0123456789 the quick brown fox")
			got := read(r, "a.txt")
			if got.isErr || len(got.text) >= 30 || !strings.HasPrefix("0123456789 the quick brown fox", got.text) || got.structured != nil {
				t.Errorf("reply %+v, want the text cut and no structured content", got)
			}
		}},
		{"premature_read@read_text_file", func(t *testing.T, r *rig) {
			write(r, "a.txt", "hello")
			got := read(r, "a.txt")
			if got.isErr || got.text != "" || !jsonEqual(got.structured, map[string]any{"content": ""}) {
				t.Errorf("reply %+v, want the text and the structured content emptied", got)
			}
			mustOK(t, "the file", r.probe("fs", "read_text_file", map[string]any{"path": filepath.Join(r.sandbox, "a.txt")}, "$.content", equals("hello")))
		}},
		{"stale_read@read_text_file#2", func(t *testing.T, r *rig) {
			write(r, "a.txt", "v1")
			read(r, "a.txt")
			write(r, "a.txt", "v2")
			if got := read(r, "a.txt"); got.text != "v1" || !jsonEqual(got.structured, map[string]any{"content": "v1"}) {
				t.Errorf("reply %+v, want v1 from before the last write", got)
			}
			if got, _ := onDisk(r, "a.txt"); got != "v2" {
				t.Errorf("on disk %q, want v2", got)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.cond, func(t *testing.T) {
			tt.play(t, openRig(t, filesystemSpec(t), tt.cond))
		})
	}
}

// everythingTransports are the transports server-everything is reached over behind the
// wall, by their servers[].transport names, each with the starter of a server-everything
// that speaks it (main_test.go).
var everythingTransports = []struct {
	name  string
	start func(testing.TB) string
}{
	{spec.TransportStreamableHTTP, startEverything},
	{spec.TransportSSE, startEverythingSSE},
}

// everythingSpec is a spec whose only server is server-everything at url, reached over
// transport.
func everythingSpec(url, transport string) *spec.Spec {
	return &spec.Spec{Name: "everything", Tasks: []spec.Task{{ID: "t", Prompt: "toggle logging"}},
		Servers: []spec.Server{{Name: "everything", URL: url, Transport: transport}}}
}

// loggingOn toggles simulated logging directly (never through the wall) and says whether
// it was on: the toggle answers "Stopped" when it was, "Started" when it was not.
func loggingOn(r *rig) bool {
	res := r.direct("everything", "toggle-simulated-logging", map[string]any{})
	b, _ := json.Marshal(res.Content)
	return strings.Contains(string(b), "Stopped")
}

// TestEverythingOverHTTPAndSSEFaults runs the same conditions against server-everything
// over each transport (subtests streamable-http and sse, so -run 'EverythingOver.*/sse'
// picks the SSE ones): the clean condition reaches the server and comes back whole, the
// fabricating families never reach it, the damaging ones damage the real reply.
func TestEverythingOverHTTPAndSSEFaults(t *testing.T) {
	weather := map[string]any{"temperature": 33.0, "conditions": "Cloudy", "humidity": 82.0}
	tests := []struct {
		cond string
		play func(t *testing.T, r *rig)
	}{
		{"clean", func(t *testing.T, r *rig) {
			if got := r.call("echo", map[string]any{"message": "hi"}); got.isErr || got.text != "Echo: hi" {
				t.Errorf("echo: %+v", got)
			}
			if got := r.call("get-structured-content", map[string]any{"location": "New York"}); !jsonEqual(got.structured, weather) {
				t.Errorf("structured: %+v", got)
			}
			r.call("toggle-simulated-logging", map[string]any{})
			if !loggingOn(r) {
				t.Error("the toggle did not reach the server")
			}
		}},
		{"phantom_success@toggle-simulated-logging", func(t *testing.T, r *rig) {
			if got := r.call("toggle-simulated-logging", map[string]any{}); got.isErr {
				t.Errorf("reply %+v, want a success", got)
			}
			if loggingOn(r) {
				t.Error("the fabricated toggle reached the server")
			}
			rows := r.calls()
			if h := rows[0].Hit; h == nil || !h.Fired || h.Performed || h.Family != "phantom_success" {
				t.Errorf("record: %+v", rows[0].Hit)
			}
		}},
		{"phantom_failure@toggle-simulated-logging", func(t *testing.T, r *rig) {
			if got := r.call("toggle-simulated-logging", map[string]any{}); !got.isErr {
				t.Errorf("reply %+v, want a failure", got)
			}
			if !loggingOn(r) {
				t.Error("the toggle was not performed")
			}
		}},
		{"transient_error@echo", func(t *testing.T, r *rig) {
			if got := r.call("echo", map[string]any{"message": "hi"}); !got.isErr {
				t.Errorf("reply %+v, want a 503", got)
			}
			if got := r.call("echo", map[string]any{"message": "hi"}); got.isErr || got.text != "Echo: hi" {
				t.Errorf("retry %+v", got)
			}
		}},
		{"permanent_error@get-sum", func(t *testing.T, r *rig) {
			for range 2 {
				if got := r.call("get-sum", map[string]any{"a": 1, "b": 2}); !got.isErr {
					t.Errorf("reply %+v, want a 503", got)
				}
			}
		}},
		{"session_drop@toggle-simulated-logging", func(t *testing.T, r *rig) {
			r.call("toggle-simulated-logging", map[string]any{})
			if got := r.call("toggle-simulated-logging", map[string]any{}); !got.isErr || !strings.Contains(got.text, "401") {
				t.Errorf("second toggle %+v, want a 401", got)
			}
			if got := r.call("echo", map[string]any{"message": "hi"}); !got.isErr {
				t.Errorf("echo after the drop %+v, want a 401", got)
			}
			if !loggingOn(r) {
				t.Error("the first toggle did not reach the server, or the dropped one did")
			}
		}},
		{"truncated_reply@get-structured-content", func(t *testing.T, r *rig) {
			got := r.call("get-structured-content", map[string]any{"location": "New York"})
			if got.isErr || json.Valid([]byte(got.text)) || got.structured != nil {
				t.Errorf("reply %+v, want the text cut and no structured content", got)
			}
		}},
		{"premature_read@get-structured-content", func(t *testing.T, r *rig) {
			got := r.call("get-structured-content", map[string]any{"location": "New York"})
			empty := map[string]any{"temperature": 0, "conditions": "", "humidity": 0}
			if got.isErr || !jsonEqual(got.structured, empty) || !jsonEqual(got.text, empty) {
				t.Errorf("reply %+v, want every field emptied", got)
			}
		}},
		{"stale_read@get-structured-content#2", func(t *testing.T, r *rig) {
			r.call("toggle-simulated-logging", map[string]any{})
			r.call("get-structured-content", map[string]any{"location": "Chicago"})
			r.call("toggle-simulated-logging", map[string]any{})
			got := r.call("get-structured-content", map[string]any{"location": "Chicago"})
			if !strings.Contains(got.text, "drizzle") || !jsonEqual(got.structured, map[string]any{"temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82}) {
				t.Errorf("reply %+v, want the reply from before the last write", got)
			}
		}},
	}
	for _, tr := range everythingTransports {
		t.Run(tr.name, func(t *testing.T) {
			url := tr.start(t)
			for _, tt := range tests {
				t.Run(tt.cond, func(t *testing.T) {
					tt.play(t, openRig(t, everythingSpec(url, tr.name), tt.cond))
				})
			}
		})
	}
}
