package probes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/crashwall/chaos/record"
)

// SwallowedWrites reads the world from the record alone, where it can: the wall knows
// every write it answered without performing (a phantom success, an error it made up, a
// dropped session). Such a write ends right only if the agent made it again, with the
// same arguments, and that call went through. applies is false when the record shows no
// swallowed write; it then says nothing of the world.
func SwallowedWrites(log *record.Log) (res Result, applies bool) {
	if log == nil || log.Start == nil {
		return Result{}, false
	}
	writes := map[string]bool{}
	for _, t := range log.Start.Writes {
		writes[t] = true
	}
	calls := log.Calls()
	var lost, redone []string
	for i, c := range calls {
		if c.Hit == nil || !c.Hit.Fired || c.Hit.Performed || !writes[c.Tool] {
			continue
		}
		label := fmt.Sprintf("%s %s (call %d)", c.Tool, oneLineJSON(c.Args), i+1)
		if madeAgain(c, calls[i+1:]) {
			redone = append(redone, label)
		} else {
			lost = append(lost, label)
		}
	}
	if len(lost) == 0 && len(redone) == 0 {
		return Result{}, false
	}
	if len(lost) > 0 {
		return Result{Detail: "the wall swallowed " + strings.Join(lost, ", ") + " and the agent never made it again with the same arguments"}, true
	}
	return Result{OK: true, Detail: "the wall swallowed " + strings.Join(redone, ", ") + "; the agent made it again and it went through"}, true
}

// madeAgain says whether a later call repeats c (same tool, same arguments as JSON
// values) and reached the world without an error.
func madeAgain(c record.Row, later []record.Row) bool {
	want := canonicalJSON(c.Args)
	for _, r := range later {
		if r.Tool != c.Tool || r.IsError || canonicalJSON(r.Args) != want {
			continue
		}
		if r.Hit == nil || r.Hit.Performed {
			return true
		}
	}
	return false
}

func canonicalJSON(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func oneLineJSON(raw json.RawMessage) string {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return clip(string(raw), 120)
	}
	return clip(buf.String(), 120)
}
