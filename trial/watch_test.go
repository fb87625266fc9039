package trial

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/spec"
)

// The abort rules, row by row.
func TestWatcherRules(t *testing.T) {
	call := func(tool, args string, isErr bool) record.Row {
		return record.Row{Type: record.TypeCall, Tool: tool, Args: json.RawMessage(args), IsError: isErr}
	}
	rejected := record.Row{Type: record.TypeRejected, Tool: "nope"}
	denied := func(args string) record.Row {
		return record.Row{Type: record.TypeRejected, Tool: "browser", Transport: "cdp", Args: json.RawMessage(args), Reason: "denied write: POST to a URL not in browser.allow_writes"}
	}
	tests := []struct {
		name    string
		limits  spec.Limits
		rows    []record.Row
		abortAt int // index of the row that crosses a limit, -1 for none
	}{
		{"no limits", spec.Limits{}, []record.Row{call("a", `{}`, true), call("a", `{}`, true), rejected}, -1},
		{"max calls counts rejected calls", spec.Limits{MaxCalls: 2}, []record.Row{call("a", `{}`, false), rejected, {Type: record.TypeError}, rejected}, 3},
		{"exactly max calls is allowed", spec.Limits{MaxCalls: 2}, []record.Row{call("a", `{}`, false), call("a", `{}`, false)}, -1},
		{"repeated failures", spec.Limits{RepeatedFailures: 2}, []record.Row{call("a", `{"x":1,"y":2}`, true), call("a", `{"y":2,"x":1}`, true)}, 1},
		{"a success breaks the streak", spec.Limits{RepeatedFailures: 2}, []record.Row{call("a", `{}`, true), call("a", `{}`, false), call("a", `{}`, true)}, -1},
		{"other arguments break the streak", spec.Limits{RepeatedFailures: 2}, []record.Row{call("a", `{"x":1}`, true), call("a", `{"x":2}`, true), call("a", `{"x":2}`, true)}, 2},
		{"another tool breaks the streak", spec.Limits{RepeatedFailures: 2}, []record.Row{call("a", `{}`, true), call("b", `{}`, true), call("a", `{}`, true)}, -1},
		{"a rejected call does not break it", spec.Limits{RepeatedFailures: 2}, []record.Row{call("a", `{}`, true), rejected, call("a", `{}`, true)}, 2},
		// The browser guard's denied clicks are rejected rows: the same one again and
		// again is a streak.
		{"repeated denied writes", spec.Limits{RepeatedFailures: 3}, []record.Row{denied(`{"url":"/save"}`), call("a", `{}`, true), denied(`{"url":"/save"}`), denied(`{"url":"/save"}`)}, 3},
		{"a success breaks a denied streak", spec.Limits{RepeatedFailures: 2}, []record.Row{denied(`{}`), call("a", `{}`, false), denied(`{}`)}, -1},
		{"another denial breaks a denied streak", spec.Limits{RepeatedFailures: 2}, []record.Row{denied(`{"url":"/a"}`), denied(`{"url":"/b"}`)}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &watcher{limits: tt.limits}
			at := -1
			for i, r := range tt.rows {
				if w.see(r) != "" {
					at = i
					break
				}
			}
			if at != tt.abortAt {
				t.Errorf("aborted at row %d; want %d", at, tt.abortAt)
			}
		})
	}
}

// Rows the stream dropped are read back from the record.
func TestWatcherCatchesUp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "record.jsonl")
	rec, err := record.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		rec.Write(record.Row{Type: record.TypeCall, Tool: "a", Args: json.RawMessage(`{}`), IsError: true})
	}
	w := &watcher{limits: spec.Limits{RepeatedFailures: 4}, record: path}
	if reason := w.see(record.Row{Type: record.TypeCall, Seq: 1, Tool: "a", Args: json.RawMessage(`{}`), IsError: true}); reason != "" {
		t.Fatalf("aborted after one row: %s", reason)
	}
	// The stream brings row 5: rows 2 to 4 come from the record, and the fourth failure aborts.
	if reason := w.catchUp(5); !strings.Contains(reason, "4 times in a row") || w.last != 4 {
		t.Errorf("after catching up to row 5: last %d, reason %q", w.last, reason)
	}
}
