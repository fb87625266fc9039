package faults

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// updateModelGoldens is the -update flag, defined here unless another test file of
// the package already did.
var updateModelGoldens = func() func() bool {
	if f := flag.Lookup("update"); f != nil {
		return func() bool { return f.Value.String() == "true" }
	}
	b := flag.Bool("update", false, "rewrite the golden files")
	return func() bool { return *b }
}()

// The turns the catalogue is tried on: the turns of the support-ticket task.
var (
	modelTextTurn = ModelMessage{Text: "Done. Priority urgent, team payments — reply sent to Zoë.", FinishReason: FinishStop}
	modelToolTurn = ModelMessage{ToolCalls: []ToolCall{{ID: "call_1", Name: "update_ticket", Arguments: `{"field":"priority","value":"urgent"}`}}, FinishReason: FinishToolCalls}
	modelBothTurn = ModelMessage{
		Text: "I will set the priority first.",
		ToolCalls: []ToolCall{
			{ID: "call_1", Name: "update_ticket", Arguments: `{"ticket_id":"T-4821","field":"priority","value":"urgent","notes":["EU checkout down"],"count":2}`},
			{ID: "call_2", Name: "update_ticket", Arguments: `{"ticket_id":"T-4821","field":"team","value":"payments"}`},
		},
		FinishReason: FinishToolCalls,
	}
	modelCtx = ModelContext{
		Seed: 7, Position: "choose_tool", Attempt: 1,
		StaleValues: map[string][]any{"value": {"normal", "urgent"}, "ticket_id": {"T-4821"}},
		Entities:    map[string][]string{"ticket_id": {"T-4821", "T-4822"}, "field": {"team"}},
	}
)

func TestModelFaultsCatalogue(t *testing.T) {
	want := []string{
		"llm_error_single", "llm_timeout_single", "llm_empty_single", "llm_truncate_single", "llm_corrupt_single", "llm_schema_single",
		"tool_error_single", "tool_timeout_single", "tool_empty_single", "tool_truncate_single", "tool_corrupt_single", "tool_schema_single",
		"compound_api_degradation", "compound_content_filter", "compound_max_tokens", "compound_proxy_html", "compound_stale_data",
		"compound_wrong_entity", "compound_slow_response", "none",
	}
	if got := ModelFaultNames(); !reflect.DeepEqual(got, want) {
		t.Fatalf("names:\n got %v\nwant %v", got, want)
	}
	for _, f := range ModelFaults() {
		if !KnownModelFault(f.Name) {
			t.Errorf("%s: not known", f.Name)
		}
		if f.What == "" || strings.Contains(f.What, "\n") {
			t.Errorf("%s: What must be one line, got %q", f.Name, f.What)
		}
	}
	for _, name := range []string{"", "llm_error", "LLM_ERROR_SINGLE", "phantom_success"} {
		if KnownModelFault(name) {
			t.Errorf("%q: known, want unknown", name)
		}
		m := modelTextTurn.clone()
		_, err := ApplyModelFault(name, &m, modelCtx)
		if err == nil || !strings.Contains(err.Error(), "unknown model fault") || !strings.Contains(err.Error(), "known: llm_error_single, ") {
			t.Errorf("%q: got %v, want an unknown-fault error listing the names", name, err)
		}
	}
}

func TestModelFaultApply(t *testing.T) {
	tests := []struct {
		fault string
		in    ModelMessage
		mc    ModelContext
		want  ModelMessage
		delay time.Duration
		err   string // a substring of the refusal
	}{
		{fault: "llm_error_single", in: modelTextTurn, want: ModelMessage{Text: TextModelError, FinishReason: FinishStop}},
		{fault: "llm_error_single", in: modelToolTurn, want: ModelMessage{Text: TextModelError, FinishReason: FinishStop}},
		{fault: "llm_error_single", in: ModelMessage{Text: TextModelError, FinishReason: FinishStop}, err: "changes nothing"},
		{fault: "llm_timeout_single", in: modelTextTurn, want: ModelMessage{Text: TextModelTimeout, FinishReason: FinishStop}},
		{fault: "llm_empty_single", in: modelBothTurn, want: ModelMessage{FinishReason: FinishStop}},
		{fault: "llm_empty_single", in: ModelMessage{FinishReason: FinishStop}, err: "already empty"},
		{fault: "llm_truncate_single", in: modelTextTurn, want: ModelMessage{Text: "Done. Priority ur", FinishReason: FinishLength}},
		{fault: "llm_truncate_single", in: ModelMessage{Text: "Émile", FinishReason: FinishStop}, want: ModelMessage{Text: "É", FinishReason: FinishLength}},
		{fault: "llm_truncate_single", in: ModelMessage{Text: "k", FinishReason: FinishLength}, err: "changes nothing"},
		{fault: "llm_truncate_single", in: modelToolTurn, err: "needs a turn with text, and this turn had only tool calls"},
		{fault: "llm_truncate_single", in: modelBothTurn, want: ModelMessage{Text: "I will se", FinishReason: FinishLength}},
		{fault: "llm_corrupt_single", in: ModelMessage{Text: "Zoë — ok", FinishReason: FinishStop}, want: ModelMessage{Text: "ZoÃ« â\u0080\u0094 ok", FinishReason: FinishStop}},
		{fault: "llm_corrupt_single", in: ModelMessage{Text: "plain ascii", FinishReason: FinishStop}, err: "plain ASCII"},
		{fault: "llm_corrupt_single", in: modelToolTurn, err: "no text"},
		{fault: "llm_schema_single", in: modelTextTurn, want: ModelMessage{Text: `{"error": "content_policy_violation", "message": "This response has been filtered."}`, FinishReason: FinishStop}},
		{fault: "tool_error_single", in: modelToolTurn, want: ModelMessage{ToolCalls: []ToolCall{{ID: "call_1", Name: "update_ticket", Arguments: "{}"}}, FinishReason: FinishToolCalls}},
		{fault: "tool_error_single", in: modelTextTurn, err: "needs a turn with tool calls, and this turn had only text"},
		{fault: "tool_error_single", in: ModelMessage{ToolCalls: []ToolCall{{ID: "c", Name: "read_email", Arguments: "{}"}}, FinishReason: FinishToolCalls}, err: "changes nothing"},
		{fault: "tool_timeout_single", in: modelToolTurn, want: ModelMessage{Text: TextToolTimeout, FinishReason: FinishStop}},
		{fault: "tool_timeout_single", in: modelBothTurn, want: ModelMessage{Text: TextToolTimeout, ToolCalls: modelBothTurn.ToolCalls[1:], FinishReason: FinishToolCalls}},
		{fault: "tool_timeout_single", in: modelTextTurn, err: "no tool call"},
		{fault: "tool_empty_single", in: modelBothTurn, want: ModelMessage{Text: modelBothTurn.Text, FinishReason: FinishStop}},
		{fault: "tool_empty_single", in: modelTextTurn, err: "needs a turn with tool calls, and this turn had only text"},
		{fault: "tool_truncate_single", in: modelToolTurn, want: ModelMessage{ToolCalls: []ToolCall{{ID: "call_1", Name: "update_ticket", Arguments: `{"field":"pr","value":"u"}`}}, FinishReason: FinishToolCalls}},
		{fault: "tool_truncate_single", in: modelBothTurn, want: ModelMessage{Text: modelBothTurn.Text, ToolCalls: []ToolCall{{ID: "call_1", Name: "update_ticket", Arguments: `{"ticket_id":"T","field":"pr","value":"u","notes":["EU c"],"count":2}`}, modelBothTurn.ToolCalls[1]}, FinishReason: FinishToolCalls}},
		{fault: "tool_truncate_single", in: ModelMessage{ToolCalls: []ToolCall{{Name: "get", Arguments: `{"n":1,"ok":true}`}}}, err: "no string value"},
		{fault: "tool_truncate_single", in: ModelMessage{ToolCalls: []ToolCall{{Name: "get", Arguments: `{"f":"a","g":""}`}}}, err: "too short"},
		{fault: "tool_truncate_single", in: ModelMessage{ToolCalls: []ToolCall{{Name: "get", Arguments: `{"f":`}}}, err: "not valid JSON"},
		{fault: "tool_truncate_single", in: modelTextTurn, err: "no tool call"},
		{fault: "tool_corrupt_single", in: modelTextTurn, err: "no tool call"},
		{fault: "tool_corrupt_single", in: ModelMessage{ToolCalls: []ToolCall{{Name: "get", Arguments: `{"n":1}`}}}, err: "no string value"},
		{fault: "tool_schema_single", in: modelToolTurn, want: ModelMessage{ToolCalls: []ToolCall{{ID: "call_1", Name: "update_ticket", Arguments: `{"wrong_param": "unexpected_value"}`}}, FinishReason: FinishToolCalls}},
		{fault: "tool_schema_single", in: modelTextTurn, err: "no tool call"},
		{fault: "compound_api_degradation", in: modelBothTurn, want: ModelMessage{Text: TextServiceUnavailable, FinishReason: FinishStop}, delay: 3 * time.Second},
		{fault: "compound_content_filter", in: modelBothTurn, want: ModelMessage{Text: TextContentFiltered, FinishReason: FinishContentFilter}},
		{fault: "compound_content_filter", in: ModelMessage{Text: TextContentFiltered, FinishReason: FinishContentFilter}, err: "changes nothing"},
		{fault: "compound_max_tokens", in: modelTextTurn, want: ModelMessage{Text: "Done. Priority urgent, team ", FinishReason: FinishLength}},
		{fault: "compound_max_tokens", in: modelToolTurn, err: "needs a turn with text, and this turn had only tool calls"},
		{fault: "compound_proxy_html", in: modelToolTurn, want: ModelMessage{Text: TextProxyHTML, FinishReason: FinishStop}},
		{fault: "compound_stale_data", in: modelToolTurn, mc: modelCtx, want: ModelMessage{ToolCalls: []ToolCall{{ID: "call_1", Name: "update_ticket", Arguments: `{"field":"priority","value":"normal"}`}}, FinishReason: FinishToolCalls}},
		{fault: "compound_stale_data", in: modelToolTurn, mc: ModelContext{StaleValues: map[string][]any{"value": {"urgent"}}}, err: "no stale value known for the arguments of update_ticket (field, value)"},
		{fault: "compound_stale_data", in: modelToolTurn, err: "no stale value"},
		{fault: "compound_stale_data", in: modelTextTurn, mc: modelCtx, err: "no tool call"},
		{fault: "compound_stale_data", in: ModelMessage{ToolCalls: []ToolCall{{Name: "get", Arguments: `{"id":7,"deep":{"a":1}}`}}}, mc: ModelContext{StaleValues: map[string][]any{"id": {7, 3}, "deep": {map[string]any{"a": 1}}}},
			want: ModelMessage{ToolCalls: []ToolCall{{Name: "get", Arguments: `{"id":3,"deep":{"a":1}}`}}}},
		{fault: "compound_wrong_entity", in: modelBothTurn, mc: modelCtx, want: ModelMessage{Text: modelBothTurn.Text, ToolCalls: []ToolCall{{ID: "call_1", Name: "update_ticket", Arguments: `{"ticket_id":"T-4822","field":"priority","value":"urgent","notes":["EU checkout down"],"count":2}`}, modelBothTurn.ToolCalls[1]}, FinishReason: FinishToolCalls}},
		{fault: "compound_wrong_entity", in: modelToolTurn, mc: modelCtx, want: ModelMessage{ToolCalls: []ToolCall{{ID: "call_1", Name: "update_ticket", Arguments: `{"field":"team","value":"urgent"}`}}, FinishReason: FinishToolCalls}},
		{fault: "compound_wrong_entity", in: modelToolTurn, mc: ModelContext{Entities: map[string][]string{"field": {"priority"}}}, err: "no other entity known"},
		{fault: "compound_wrong_entity", in: ModelMessage{ToolCalls: []ToolCall{{Name: "get", Arguments: `[1]`}}}, mc: modelCtx, err: "not a JSON object"},
		{fault: "compound_slow_response", in: modelToolTurn, want: modelToolTurn, delay: 5 * time.Second},
		{fault: "none", in: modelToolTurn, want: modelToolTurn},
	}
	for _, tt := range tests {
		t.Run(tt.fault+"/"+summary(tt.in), func(t *testing.T) {
			m := tt.in.clone()
			mut, err := ApplyModelFault(tt.fault, &m, tt.mc)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got error %v, want one containing %q", err, tt.err)
				}
				if !strings.HasPrefix(err.Error(), tt.fault+": ") {
					t.Errorf("error %q does not name the fault", err)
				}
				if !reflect.DeepEqual(m, tt.in) {
					t.Errorf("a refusal changed the message:\n got %+v\nwant %+v", m, tt.in)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(m, tt.want) {
				t.Errorf("message:\n got %#v\nwant %#v", m, tt.want)
			}
			if mut.Delay != tt.delay {
				t.Errorf("delay %v, want %v", mut.Delay, tt.delay)
			}
			if mut.What == "" {
				t.Error("no What")
			}
			for _, tc := range m.ToolCalls {
				if !json.Valid([]byte(tc.Arguments)) {
					t.Errorf("arguments of %s are not JSON: %s", tc.Name, tc.Arguments)
				}
			}
		})
	}
}

func TestModelFaultCorruptArgs(t *testing.T) {
	in := ModelMessage{ToolCalls: []ToolCall{{ID: "c1", Name: "send_email", Arguments: `{"to":"dana@example.com","body":"Your ticket is now urgent and with the payments team.","n":3,"tags":["eu","x"]}`}}}
	m := in.clone()
	if _, err := ApplyModelFault("tool_corrupt_single", &m, modelCtx); err != nil {
		t.Fatal(err)
	}
	var before, after struct {
		To, Body string
		N        int
		Tags     []string
	}
	json.Unmarshal([]byte(in.ToolCalls[0].Arguments), &before)
	if err := json.Unmarshal([]byte(m.ToolCalls[0].Arguments), &after); err != nil {
		t.Fatalf("corrupted arguments are not JSON: %v", err)
	}
	if after.N != 3 {
		t.Errorf("a number changed: %d", after.N)
	}
	check := func(what, b, a string) {
		rb, ra := []rune(b), []rune(a)
		if len(rb) != len(ra) {
			t.Fatalf("%s: %d characters became %d", what, len(rb), len(ra))
		}
		changed := 0
		for i := range rb {
			if rb[i] != ra[i] {
				changed++
				if ra[i] < 0x2600 || ra[i] > 0x26FF {
					t.Errorf("%s: character %d became %U, outside U+2600..U+26FF", what, i, ra[i])
				}
			}
		}
		want := max((len(rb)*2+5)/10, 1)
		if changed != want {
			t.Errorf("%s: %d of %d characters changed, want %d (a fifth)", what, changed, len(rb), want)
		}
	}
	check("to", before.To, after.To)
	check("body", before.Body, after.Body)
	check("tags[0]", before.Tags[0], after.Tags[0])
	check("tags[1]", before.Tags[1], after.Tags[1])

	again := in.clone()
	ApplyModelFault("tool_corrupt_single", &again, modelCtx)
	if !reflect.DeepEqual(again, m) {
		t.Errorf("not deterministic:\n%s\n%s", again.ToolCalls[0].Arguments, m.ToolCalls[0].Arguments)
	}
	other := in.clone()
	mc := modelCtx
	mc.Seed++
	ApplyModelFault("tool_corrupt_single", &other, mc)
	if reflect.DeepEqual(other, m) {
		t.Error("another seed corrupted the same way")
	}
}

func TestModelFaultTruncateRuneBoundary(t *testing.T) {
	for _, text := range []string{"x", "日本語のテキストです", "a€b€c€d€e€f€", "🙂🙂🙂🙂"} {
		for _, fault := range []string{"llm_truncate_single", "compound_max_tokens"} {
			m := ModelMessage{Text: text, FinishReason: FinishStop}
			if _, err := ApplyModelFault(fault, &m, ModelContext{}); err != nil {
				t.Fatalf("%s %q: %v", fault, text, err)
			}
			n, k := utf8.RuneCountInString(text), utf8.RuneCountInString(m.Text)
			if !utf8.ValidString(m.Text) || !strings.HasPrefix(text, m.Text) || k < 1 || (n > 1 && k >= n) {
				t.Errorf("%s %q: cut to %q", fault, text, m.Text)
			}
		}
	}
}

func TestDecideModel(t *testing.T) {
	t.Run("rate 1 and 0", func(t *testing.T) {
		for i := range 50 {
			pos := fmt.Sprintf("call-%d", i)
			if !DecideModel(1, 1, nil, pos, 1) {
				t.Errorf("%s: rate 1 did not fire", pos)
			}
			if DecideModel(1, 0, nil, pos, 1) {
				t.Errorf("%s: rate 0 fired", pos)
			}
		}
	})
	t.Run("steps", func(t *testing.T) {
		steps := []string{"choose_tool", "summarize"}
		if !DecideModel(1, 1, steps, "choose_tool", 1) || !DecideModel(1, 1, steps, "summarize", 3) {
			t.Error("a named step was not eligible")
		}
		if DecideModel(1, 1, steps, "plan", 1) || DecideModel(1, 1, steps, "call-1", 1) {
			t.Error("an unnamed position was eligible")
		}
	})
	t.Run("rate", func(t *testing.T) {
		for _, rate := range []float64{0.1, 0.3, 0.5, 0.9} {
			n, fired := 4000, 0
			for i := range n {
				if DecideModel(int64(i/40), rate, nil, fmt.Sprintf("call-%d", i%40), 1) {
					fired++
				}
			}
			if got := float64(fired) / float64(n); got < rate-0.04 || got > rate+0.04 {
				t.Errorf("rate %.1f fired on %.3f of calls", rate, got)
			}
		}
	})
	t.Run("pure", func(t *testing.T) {
		// The decision at a named position depends on the seed, the position and the
		// attempt only: however many calls were made before it, at whatever positions.
		named := []struct {
			pos     string
			attempt int
		}{{"choose_tool", 1}, {"choose_tool", 2}, {"summarize", 1}, {"plan", 1}}
		for seed := int64(0); seed < 200; seed++ {
			var first []bool
			for _, p := range named {
				first = append(first, DecideModel(seed, 0.5, nil, p.pos, p.attempt))
			}
			for i := range 20 { // calls at other positions in between
				DecideModel(seed, 0.5, nil, fmt.Sprintf("extra-%d", i), 1)
			}
			for i, p := range named {
				if DecideModel(seed, 0.5, nil, p.pos, p.attempt) != first[i] {
					t.Fatalf("seed %d %s#%d: decided differently the second time", seed, p.pos, p.attempt)
				}
			}
		}
	})
	t.Run("attempt and seed matter", func(t *testing.T) {
		diffAttempt, diffSeed := false, false
		for seed := int64(0); seed < 100; seed++ {
			a := DecideModel(seed, 0.5, nil, "choose_tool", 1)
			diffAttempt = diffAttempt || a != DecideModel(seed, 0.5, nil, "choose_tool", 2)
			diffSeed = diffSeed || a != DecideModel(seed+1, 0.5, nil, "choose_tool", 1)
		}
		if !diffAttempt || !diffSeed {
			t.Errorf("the attempt (%v) or the seed (%v) never changed a decision", diffAttempt, diffSeed)
		}
	})
}

// TestModelFaultGoldens applies every fault to the three turns and compares what the
// agent would receive with testdata/model/<fault>.txt (rewrite with -update).
func TestModelFaultGoldens(t *testing.T) {
	turns := []struct {
		name string
		m    ModelMessage
	}{{"text turn", modelTextTurn}, {"tool turn", modelToolTurn}, {"text and tool turn", modelBothTurn}}
	for _, f := range ModelFaults() {
		t.Run(f.Name, func(t *testing.T) {
			var b strings.Builder
			fmt.Fprintf(&b, "# %s: %s\n", f.Name, f.What)
			for _, turn := range turns {
				m := turn.m.clone()
				mut, err := ApplyModelFault(f.Name, &m, modelCtx)
				fmt.Fprintf(&b, "\n## %s\n", turn.name)
				if err != nil {
					fmt.Fprintf(&b, "refused: %v\n", err)
					continue
				}
				out, _ := json.MarshalIndent(struct {
					Delay string       `json:"delay,omitempty"`
					What  string       `json:"what"`
					Got   ModelMessage `json:"got"`
				}{delayText(mut.Delay), mut.What, m}, "", "  ")
				b.Write(out)
				b.WriteByte('\n')
			}
			path := filepath.Join("testdata", "model", f.Name+".txt")
			if updateModelGoldens() {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if b.String() != string(want) {
				t.Errorf("%s differs (run with -update to rewrite it):\n--- got\n%s\n--- want\n%s", path, b.String(), want)
			}
		})
	}
}

func delayText(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

func summary(m ModelMessage) string {
	switch {
	case m.Text != "" && len(m.ToolCalls) > 0:
		return "text and tools"
	case len(m.ToolCalls) > 0:
		return "tools"
	case m.Text != "":
		return fmt.Sprintf("text %.12s", m.Text)
	}
	return "empty"
}

// The model's arguments change only where the fault changes them: spacing, key order,
// numbers and & stay the model's own text.
func TestModelFaultArgsKeepTheRest(t *testing.T) {
	args := `{ "zeta": "Fish & Chips",  "id": "A-17", "n": 1.50, "tags": ["x < y"] }`
	tests := []struct {
		name string
		fn   func(*ModelMessage, ModelContext) (Mutation, error)
		mc   ModelContext
		want string
	}{
		{"truncate", truncateArgs, ModelContext{}, `{ "zeta": "Fis",  "id": "A", "n": 1.50, "tags": ["x"] }`},
		{"wrong entity", wrongEntity, ModelContext{Entities: map[string][]string{"id": {"A-17", "B-99 & co"}}},
			`{ "zeta": "Fish & Chips",  "id": "B-99 & co", "n": 1.50, "tags": ["x < y"] }`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &ModelMessage{ToolCalls: []ToolCall{{Name: "f", Arguments: args}}, FinishReason: FinishToolCalls}
			if _, err := tt.fn(m, tt.mc); err != nil {
				t.Fatal(err)
			}
			if got := m.ToolCalls[0].Arguments; got != tt.want {
				t.Errorf("arguments:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestModelFaultTextsAreAgentChaos: what the agent receives from each fault that carries
// a text is AgentChaos's text byte for byte (testdata/agentchaos-texts.json, copied from
// its source, which the file names).
func TestModelFaultTextsAreAgentChaos(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "agentchaos-texts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Source string `json:"source"`
		Texts  []struct {
			Fault        string  `json:"fault"`
			Content      *string `json:"content"`
			Arguments    *string `json:"arguments"`
			DelayMS      int64   `json:"delay_ms"`
			FinishReason string  `json:"finish_reason"`
		} `json:"texts"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(doc.Source, "AgentChaos") || len(doc.Texts) == 0 {
		t.Fatalf("the testdata must name its source and hold texts: %s", b)
	}
	for _, tt := range doc.Texts {
		t.Run(tt.Fault, func(t *testing.T) {
			m := modelTextTurn.clone()
			if tt.Arguments != nil || tt.Fault == "tool_timeout_single" {
				m = modelToolTurn.clone()
			}
			mut, err := ApplyModelFault(tt.Fault, &m, modelCtx)
			if err != nil {
				t.Fatal(err)
			}
			if tt.Content != nil && m.Text != *tt.Content {
				t.Errorf("content:\n got %q\nwant %q", m.Text, *tt.Content)
			}
			if tt.Arguments != nil && (len(m.ToolCalls) == 0 || m.ToolCalls[0].Arguments != *tt.Arguments) {
				t.Errorf("arguments: got %+v, want %q", m.ToolCalls, *tt.Arguments)
			}
			if got := mut.Delay.Milliseconds(); got != tt.DelayMS {
				t.Errorf("delay %d ms, want %d", got, tt.DelayMS)
			}
			if tt.FinishReason != "" && m.FinishReason != tt.FinishReason {
				t.Errorf("finish reason %q, want %q", m.FinishReason, tt.FinishReason)
			}
		})
	}
}
