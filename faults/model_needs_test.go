package faults

import (
	"errors"
	"testing"
)

// TestModelFaultNeeds: a fault fired on a turn without the part it needs fails with a
// TurnLacks that says the part and what the turn had; on a turn with it, it applies.
func TestModelFaultNeedsPart(t *testing.T) {
	calls := ModelMessage{ToolCalls: []ToolCall{{ID: "1", Name: "update_ticket", Arguments: `{"value":"urgent"}`}}, FinishReason: FinishToolCalls}
	text := ModelMessage{Text: "Done, the ticket is urgent.", FinishReason: FinishStop}
	tests := []struct {
		fault string
		m     ModelMessage
		had   string // "": applies
	}{
		{"llm_truncate_single", calls, "only tool calls (update_ticket), no text"},
		{"compound_max_tokens", calls, "only tool calls (update_ticket), no text"},
		{"llm_truncate_single", text, ""},
		{"tool_error_single", text, "only text, no tool call"},
		{"tool_error_single", calls, ""},
		{"llm_error_single", calls, ""},
	}
	for _, tt := range tests {
		m := tt.m
		_, err := ApplyModelFault(tt.fault, &m, ModelContext{})
		var lacks *TurnLacks
		switch {
		case tt.had == "" && err != nil:
			t.Errorf("%s: %v, want it applied", tt.fault, err)
		case tt.had != "" && (!errors.As(err, &lacks) || lacks.Had != tt.had || lacks.Needs != ModelFaultNeeds(tt.fault)):
			t.Errorf("%s: %v, want a turn that lacks %s (it had %s)", tt.fault, err, ModelFaultNeeds(tt.fault), tt.had)
		}
	}
	for _, f := range ModelFaults() {
		if f.Needs != NeedsText && f.Needs != NeedsToolCalls && f.Needs != NeedsAny {
			t.Errorf("%s needs %q", f.Name, f.Needs)
		}
	}
	if needs, ok := LackedPart(LacksHow(NeedsText)); !ok || needs != NeedsText {
		t.Errorf("LackedPart(LacksHow(text)) = %q, %v", needs, ok)
	}
}
