package trial

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/spec"
)

// TestBranchPoint: the branch is the state just before the clean trial's first performed
// write on the last unit; a refused or failed write and a read do not count, and a task
// of one unit, a faulted record or one with no such write has no branch.
func TestBranchPoint(t *testing.T) {
	book := spec.Script{Name: "book", Path: "book.py", Effect: spec.EffectWrite, Key: "shipment/{order}", Value: "{carrier}"}
	get := spec.Script{Name: "get", Path: "get.py", Effect: spec.EffectRead, Key: "shipment/{order}"}
	s := &spec.Spec{Tools: []spec.Tool{spec.ScriptTool(book), spec.ScriptTool(get)}}
	task := spec.Task{Units: []string{"R-10", "R-101"}}
	call := func(seq int, tool, key string, isErr bool, state map[string]any) record.Row {
		args, _ := json.Marshal(map[string]string{"key": key, "value": "DHL"})
		return record.Row{Type: record.TypeCall, Seq: seq, Tool: tool, Args: args, IsError: isErr, State: state}
	}
	after10 := map[string]any{"shipment/R-10": "DHL"}
	log := &record.Log{Start: &record.Row{Type: record.TypeSessionStart, InitialState: map[string]any{}}, Rows: []record.Row{
		call(2, "book", "shipment/R-10", false, after10),
		call(3, "get", "shipment/R-101", false, after10),
		call(4, "book", "shipment/R-101", true, after10), // failed: not performed
		call(5, "book", "shipment/R-101", false, map[string]any{"shipment/R-10": "DHL", "shipment/R-101": "DHL"}),
	}}
	b, err := branchPoint(s, task, log)
	if err != nil || b.Seq != 5 || len(b.State) != 1 || b.State["shipment/R-10"] != "DHL" || len(b.Done) != 1 || b.Done[0] != "R-10" {
		t.Fatalf("branch %+v, %v; want before row 5, R-10 booked and done", b, err)
	}
	if _, err := branchPoint(s, spec.Task{Units: []string{"R-10"}}, log); err == nil || !strings.Contains(err.Error(), "two units or more") {
		t.Errorf("one unit: %v", err)
	}
	log.Rows = log.Rows[:3]
	if _, err := branchPoint(s, task, log); err == nil || !strings.Contains(err.Error(), "never wrote on the last unit R-101") {
		t.Errorf("no write on R-101: %v", err)
	}
	log.Start.Fault = &record.Fault{Condition: "phantom_success@book"}
	if _, err := branchPoint(s, task, log); err == nil || !strings.Contains(err.Error(), "not clean") {
		t.Errorf("a faulted record: %v", err)
	}
}
