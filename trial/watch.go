package trial

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/crashwall/chaos/proxies/llm"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
)

// Watch follows the trial's record as the hub writes it and applies the spec's abort
// rules (limits): too many calls, too long on the wall clock, the same call failing
// again and again. It returns the reason when one is crossed, and "" when ctx ends, the
// hub closes, or this host serves no such trial. Every tick it calls tick (may be nil)
// with the tool calls seen so far.
//
//	hub ──rows──> watcher ──rule crossed──> reason
func (h *Host) Watch(ctx context.Context, in run.TrialInput, every time.Duration, tick func(calls int)) string {
	lt := h.live(in.Key())
	if lt == nil {
		h.logger().Warn("no running hub to watch in this worker", "trial", in.Trial.ID)
		return ""
	}
	w := &watcher{limits: lt.spec.Limits, record: lt.record}

	// The stream drops rows nobody reads (before the watcher started, between two
	// attempts, or when it falls behind): the record on disk fills the gaps.
	if reason := w.catchUp(0); reason != "" {
		return reason
	}
	var clock <-chan time.Time
	if d := time.Duration(w.limits.WallClock); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		clock = t.C
	}
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return ""
		case r, ok := <-lt.rows:
			if !ok {
				return "" // the hub closed: the trial is over
			}
			if r.Seq <= w.last {
				continue
			}
			if reason := w.catchUp(r.Seq); reason != "" {
				return reason
			}
			if reason := w.see(*r); reason != "" {
				return reason
			}
		case <-clock:
			return fmt.Sprintf("the trial ran longer than its wall clock limit of %s (limits.wall_clock)", w.limits.WallClock)
		case <-ticker.C:
			if tick != nil {
				tick(w.calls)
			}
		}
	}
}

// watcher counts what the abort rules need, row by row.
type watcher struct {
	limits spec.Limits
	record string // the record's path, to read rows the stream dropped
	last   int    // seq of the last row seen
	calls  int
	// failing is the tool and arguments of the last call if it failed; streak counts
	// how many times in a row that call failed.
	failing string
	streak  int
	// refused and refusedStreak are the same for refused calls (rejected rows).
	refused       string
	refusedStreak int
	// spent is the money of the model calls so far (limits.max_cost_usd).
	spent float64
}

// catchUp reads the rows the stream missed from the record: those after the last row
// seen and before seq (all of them when seq is 0).
func (w *watcher) catchUp(seq int) string {
	if seq != 0 && seq == w.last+1 {
		return ""
	}
	// A row being written as the file is read reads as corrupt: the rows before it are
	// kept, and the stream brings it.
	l, _ := record.ReadFile(w.record)
	if l == nil {
		return ""
	}
	for _, r := range l.Rows {
		if r.Seq <= w.last || (seq != 0 && r.Seq >= seq) {
			continue
		}
		if reason := w.see(r); reason != "" {
			return reason
		}
	}
	return ""
}

// see takes one record row and returns the reason to abort, or "".
func (w *watcher) see(r record.Row) string {
	w.last = r.Seq
	if r.Type != record.TypeCall && r.Type != record.TypeRejected {
		return ""
	}
	if r.Transport == llm.TransportLLM {
		// A model call through the model proxy, not a tool call: it counts towards the
		// trial's money only.
		return w.spend(r)
	}
	w.calls++
	if limit := w.limits.MaxCalls; limit > 0 && w.calls > limit {
		return fmt.Sprintf("the agent made more than %d tool calls (limits.max_calls)", limit)
	}
	if r.Type == record.TypeRejected {
		// A refused call (a browser write denied by the guard, a tool the wall does not
		// have): the same one again and again is a streak of its own, which a call in
		// between does not end unless it succeeds.
		sig := r.Tool + "\x00" + canonicalJSON(r.Args)
		if sig == w.refused {
			w.refusedStreak++
		} else {
			w.refused, w.refusedStreak = sig, 1
		}
		if n := w.limits.RepeatedFailures; n > 0 && w.refusedStreak >= n {
			return fmt.Sprintf("the agent made the same refused call to %s %d times in a row (limits.repeated_failures): %s", r.Tool, w.refusedStreak, r.Reason)
		}
		return ""
	}
	if !r.IsError {
		w.failing, w.streak = "", 0
		w.refused, w.refusedStreak = "", 0
		return ""
	}
	sig := r.Tool + "\x00" + canonicalJSON(r.Args)
	if sig == w.failing {
		w.streak++
	} else {
		w.failing, w.streak = sig, 1
	}
	if n := w.limits.RepeatedFailures; n > 0 && w.streak >= n {
		return fmt.Sprintf("the agent made the same failing call to %s %d times in a row (limits.repeated_failures)", r.Tool, w.streak)
	}
	return ""
}

// canonicalJSON writes arguments with their keys sorted, so the same arguments in another
// order are the same call.
func canonicalJSON(raw json.RawMessage) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
