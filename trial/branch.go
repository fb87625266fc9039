package trial

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// Branch is where a fault trial of a `chaos run --branch` run would start (docs/shim.md,
// "--branch"; StartHub reads it, branchrun.go): the twin's state just before the clean
// trial's first write on the task's last unit, the units done before it, which the
// fault trial's task would be told are done, and the calls before it, which its fault's
// positions count on from.
type Branch struct {
	// State is the twin's state before that write; Seq is the write's row in the clean
	// trial's record.
	State map[string]any `json:"state"`
	Seq   int            `json:"seq"`
	// Done are the task's units before the last one.
	Done []string `json:"done"`
	// Prior are the clean trial's calls before the write: the fault trial's positions
	// continue from them, so "the 2nd call to book_shipment" is the call it is in a
	// whole trial.
	Prior []hub.Prior `json:"prior,omitempty"`
}

// branchPoint finds the branch in the clean trial's record: its first performed write
// (a call of a tool that writes, not refused, performed) whose state key names the task's
// last unit; the state is the one the row before it left (the session start's initial
// state when there is none).
func branchPoint(s *spec.Spec, task spec.Task, log *record.Log) (Branch, error) {
	if len(task.Units) < 2 {
		return Branch{}, errors.New("--branch needs a task of two units or more (units:): the fault trials start at the last one")
	}
	if log == nil || log.Start == nil {
		return Branch{}, errors.New("--branch: the clean trial has no record to branch from")
	}
	if log.Start.Fault != nil {
		return Branch{}, fmt.Errorf("--branch: the trial to branch from is not clean (%s)", log.Start.Condition)
	}
	last := task.Units[len(task.Units)-1]
	state := log.Start.InitialState
	var prior []hub.Prior
	for _, r := range log.Rows {
		if r.Type != record.TypeCall {
			continue
		}
		t, ok := toolByName(s, r.Tool)
		performed := r.Hit != nil && r.Hit.Performed || r.Hit == nil && !r.IsError
		if ok && t.Effect == spec.EffectWrite && performed {
			var args map[string]any
			json.Unmarshal(r.Args, &args)
			if key, ok := t.StateKey(args); ok && names(key, last) {
				return Branch{State: world.Clone(state), Seq: r.Seq, Done: append([]string(nil), task.Units[:len(task.Units)-1]...), Prior: prior}, nil
			}
		}
		prior = append(prior, hub.Prior{Tool: r.Tool, Failed: r.IsError})
		if r.State != nil {
			state = r.State
		}
	}
	return Branch{}, fmt.Errorf("--branch: the clean trial never wrote on the last unit %s, so there is no point to branch from", last)
}

func toolByName(s *spec.Spec, name string) (spec.Tool, bool) {
	for _, t := range s.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return spec.Tool{}, false
}
