package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/crashwall/chaos/run"
)

// ReviewedNote says how many of the scored trials that match the filter had their world
// verdict decided by a reviewer model, and its agreement with people as the trials
// recorded it ("not measured" until chaos judge agree --reviewer --register measured
// it): "2 of 4 decided by the reviewer model:rev (its agreement with people: not
// measured)", or "" when the reviewer decided none. A rate that rests on a reviewer's
// word carries this note beside it.
func ReviewedNote(results []run.TrialResult, match func(run.TrialResult) bool) string {
	scored := 0
	by := map[string]int{}
	agreement := map[string]string{}
	for _, t := range results {
		if !match(t) || !Scored(t.Verdict) {
			continue
		}
		scored++
		if r := ReviewDecided(t); r != "" {
			by[r]++
			agreement[r] = t.Review.Agreement
		}
	}
	var parts []string
	for r, n := range by {
		a := agreement[r]
		if a == "" {
			a = "not measured"
		}
		parts = append(parts, fmt.Sprintf("%d of %d decided by the reviewer %s (its agreement with people: %s)", n, scored, r, a))
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}

// ReviewedLines is, per condition (and cell when the run has several), the note of the
// verdicts a reviewer decided there: summary.txt prints them under its table.
func ReviewedLines(results []run.TrialResult, conditions []string) []string {
	cells := map[string]int{}
	for _, t := range results {
		cells[t.Cell]++
	}
	var lines []string
	for _, c := range conditions {
		for _, cell := range sortedKeys(cells) {
			note := ReviewedNote(results, func(t run.TrialResult) bool { return t.Condition == c && t.Cell == cell })
			if note == "" {
				continue
			}
			name := c
			if len(cells) > 1 {
				name += " (" + cell + ")"
			}
			lines = append(lines, name+": "+note)
		}
	}
	return lines
}
