package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/proxies/httpwall"
	"github.com/crashwall/chaos/proxies/llm"
	"github.com/crashwall/chaos/record"
)

// decisionRun is one run of model calls through a fresh model proxy (as each trial has
// its own), recording which positions the fault fired at.
type decisionRun struct {
	seed  int64
	rate  float64
	steps []string
	// calls are the positions called, in order; "" is a call that declares none.
	calls []string
}

// fired runs the calls through a proxy armed with llm_error_single (it applies to every
// text answer) and returns, per declared position, whether the fault fired, read from
// the record.
func (d decisionRun) fired(t *testing.T, upstream string) map[string]bool {
	t.Helper()
	path := filepath.Join(t.TempDir(), "record.jsonl")
	rec, err := record.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := llm.NewModelProxy(llm.ModelProxyConfig{Upstream: upstream, Fault: "llm_error_single", Rate: d.rate, Steps: d.steps, Seed: d.seed, Record: rec})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.StripPrefix(httpwall.ModelPrefix, p))
	defer srv.Close()
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"triage T-4821"}]}`)
	for _, pos := range d.calls {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+httpwall.ModelPrefix+"/v1/chat/completions", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if pos != "" {
			req.Header.Set(llm.PositionHeader, pos)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("position %q: status %d", pos, resp.StatusCode)
		}
	}
	rec.Close(record.Row{Reason: "test over"})
	l, err := record.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, r := range l.Calls() {
		var a struct {
			Position string `json:"position"`
		}
		if err := json.Unmarshal(r.Args, &a); err != nil {
			t.Fatal(err)
		}
		out[a.Position] = r.Hit != nil && r.Hit.Fired
	}
	return out
}

// TestDecisionsDeterministic: whether the model fault fires at a position depends on the
// trial's seed and the position only. Two runs with the same seed fire at the same
// positions; so does a run of an agent that adds calls at other positions (declared or
// not) and makes its calls in another order; each decision is faults.DecideModel's.
// Another seed fires elsewhere; steps limit the positions that are eligible.
func TestDecisionsDeterministic(t *testing.T) {
	standin := httptest.NewServer(llm.NewStandin(llm.Script{{When: llm.WhenStart, Text: "Done: priorité urgente."}}))
	t.Cleanup(standin.Close)

	var positions []string
	for i := 1; i <= 40; i++ {
		positions = append(positions, fmt.Sprintf("step-%d", i))
	}
	const seed, rate = 20261129, 0.5
	first := decisionRun{seed: seed, rate: rate, calls: positions}.fired(t, standin.URL)
	again := decisionRun{seed: seed, rate: rate, calls: positions}.fired(t, standin.URL)

	// The changed agent: extra declared and undeclared calls before and between, and its
	// positions in reverse order.
	var changed []string
	for i := len(positions) - 1; i >= 0; i-- {
		changed = append(changed, fmt.Sprintf("extra-%d", i), "", positions[i])
	}
	moved := decisionRun{seed: seed, rate: rate, calls: changed}.fired(t, standin.URL)

	n := 0
	for _, pos := range positions {
		want := faults.DecideModel(seed, rate, nil, pos, 1)
		if first[pos] != want || again[pos] != want || moved[pos] != want {
			t.Errorf("%s: fired %v, again %v, with other calls added %v; DecideModel says %v", pos, first[pos], again[pos], moved[pos], want)
		}
		if want {
			n++
		}
	}
	if n == 0 || n == len(positions) {
		t.Fatalf("at rate %v the fault fired at %d of %d positions: the draw does not vary", rate, n, len(positions))
	}

	other := decisionRun{seed: seed + 1, rate: rate, calls: positions}.fired(t, standin.URL)
	same := true
	for _, pos := range positions {
		same = same && other[pos] == first[pos]
	}
	if same {
		t.Error("another seed fires at exactly the same 40 positions")
	}

	stepped := decisionRun{seed: seed, rate: 1, steps: []string{"step-3"}, calls: changed}.fired(t, standin.URL)
	for pos, f := range stepped {
		if f != (pos == "step-3") {
			t.Errorf("steps [step-3]: %s fired %v", pos, f)
		}
	}
}
