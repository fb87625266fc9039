package probes

import (
	"bytes"
	"encoding/json"
	"math/big"
)

// sameValue is JSON-like equality: numbers compare by value whatever their Go type
// (1 == 1.0), but a string never equals a number ("1" != 1).
func sameValue(a, b any) bool {
	na, errA := normalize(a)
	nb, errB := normalize(b)
	if errA != nil || errB != nil {
		return false
	}
	return deepEqual(na, nb)
}

// normalize turns any Go value into the JSON data model: map[string]any, []any,
// string, bool, nil and json.Number (kept exact, so large integers stay distinct).
func normalize(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return out, nil
}

func deepEqual(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		rx, okx := new(big.Rat).SetString(x.String())
		ry, oky := new(big.Rat).SetString(y.String())
		return okx && oky && rx.Cmp(ry) == 0
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, vx := range x {
			vy, ok := y[k]
			if !ok || !deepEqual(vx, vy) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !deepEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	default:
		return a == b
	}
}

// show writes a value the way a reader of a report expects: JSON, so a string is
// quoted and a number is not.
func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "(unprintable value)"
	}
	const max = 200
	if len(b) > max {
		return string(b[:max]) + "..."
	}
	return string(b)
}
