package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/spec"
)

// branchLine is the plan's one line about --branch ("" without it): where the fault
// trials start, or why they run whole.
func branchLine(s *spec.Spec, p *spec.Plan) string {
	if !p.Branch {
		return ""
	}
	if !slices.Contains(p.Conditions, faults.CleanID) {
		return "branch: none, the fault trials run whole: the run has no clean trial to branch from (--only leaves out clean)"
	}
	var whole []string
	for _, t := range s.Tasks {
		if len(t.Units) < 2 {
			name := t.ID
			if name == "" {
				name = "the task"
			}
			whole = append(whole, name)
		}
	}
	if len(whole) == len(s.Tasks) {
		return "branch: none, the fault trials run whole: --branch needs a task of two units or more (units:)"
	}
	line := "branch: clean trials first; each fault trial starts from its cell's clean trial just before its first write on the last unit (result.json's branch says where, or why it ran whole)"
	if len(whole) > 0 {
		line += "; " + strings.Join(whole, ", ") + " of one unit run whole"
	}
	return fmt.Sprint(line)
}

// branchOutcome is the run's one line on where its fault trials started (their
// result.json's branch): how many from their clean trial, how many whole and why.
func branchOutcome(outDir string) string {
	from, whole := 0, map[string]int{}
	filepath.WalkDir(filepath.Join(outDir, "trials"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "result.json" {
			return nil
		}
		var r struct {
			Branch string `json:"branch"`
		}
		if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, &r) == nil && r.Branch != "" {
			if strings.HasPrefix(r.Branch, "from ") {
				from++
			} else {
				whole[r.Branch]++
			}
		}
		return nil
	})
	line := fmt.Sprintf("branch: %d fault trials started from their clean trial", from)
	for _, why := range slices.Sorted(maps.Keys(whole)) {
		line += fmt.Sprintf("; %d %s", whole[why], why)
	}
	return line
}
