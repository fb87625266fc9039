package agents

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/crashwall/chaos/spec"
)

// TestScriptForTask: in a spec with several tasks (Ajantik's support-ticket file: triage
// sets priority and team, reroute the team only), the script of a task writes that task's
// values only; no prompt, or one that names no task, writes every task's.
func TestScriptForTask(t *testing.T) {
	s, err := spec.Load(filepath.Join("..", "spec", "testdata", "ajantik-support-ticket.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	writes := func(prompt string) []string {
		sc, err := ScriptForTask(s, prompt)
		if err != nil {
			t.Fatal(err)
		}
		var w []string
		for _, st := range sc.Writes {
			w = append(w, st.Key+"="+st.Want.(string))
		}
		return w
	}
	tests := []struct {
		prompt string
		want   []string
	}{
		{s.Tasks[0].Prompt, []string{"priority=urgent", "team=payments"}},
		{s.Tasks[1].Prompt, []string{"team=shipping"}},
		{"", []string{"priority=urgent", "team=payments", "team=shipping"}},
		{"some other task", []string{"priority=urgent", "team=payments", "team=shipping"}},
	}
	for _, tt := range tests {
		if got := writes(tt.prompt); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q: writes %v, want %v", tt.prompt, got, tt.want)
		}
	}
}
