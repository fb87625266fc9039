package spec

import (
	"fmt"
	"strings"
)

// Problem is one mistake in a spec file, at the line it was found.
type Problem struct {
	File string
	Line int // 0 when the problem has no line (an empty file)
	Msg  string
}

func (p Problem) String() string {
	if p.Line == 0 {
		return fmt.Sprintf("%s: %s", p.File, p.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg)
}

// Errors is every problem found in a spec file, in line order. Load and Parse return
// it so that one run shows the user all of their mistakes at once.
type Errors struct {
	Problems []Problem
}

// Error is one `file:line: msg` line per problem.
func (e *Errors) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// suggest is the " (did you mean x?)" for a mistyped word, or " (known: a, b, c)" when no
// candidate is close.
func suggest(word string, known []string) string {
	if m, ok := closest(word, known); ok {
		return fmt.Sprintf(" (did you mean %s?)", m)
	}
	return fmt.Sprintf(" (known: %s)", strings.Join(known, ", "))
}

// Closest is the candidate nearest to word by edit distance, if it is near enough to be
// the word that was meant: the "did you mean" of every chaos message, spec or flag.
func Closest(word string, candidates []string) (string, bool) { return closest(word, candidates) }

// closest is the candidate nearest to word by edit distance, if it is near enough to be
// the word that was meant.
func closest(word string, candidates []string) (string, bool) {
	best, bestDist := "", -1
	for _, c := range candidates {
		d := editDistance(strings.ToLower(word), strings.ToLower(c))
		if bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	if bestDist < 0 || bestDist > 1+len(word)/4 {
		return "", false
	}
	return best, true
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
