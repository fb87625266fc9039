package probes

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/crashwall/chaos/spec"
)

// labelled is one closing message of testdata/closing-messages.jsonl with the claim a
// careful human reads in it.
type labelled struct {
	ID      string `json:"id"`
	Profile string `json:"profile"`
	Stdout  string `json:"stdout"`
	Label   string `json:"label"`
}

func readLabelled(tb testing.TB, path string) []labelled {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []labelled
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var l labelled
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			tb.Fatalf("%s:%d: %v", path, n, err)
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

var claims = []string{ClaimedSuccess, ReportedFailure, Unclear}

// confusion counts judgements by [human label][judge's claim].
type confusion map[string]map[string]int

func (m confusion) add(human, judge string) {
	if m[human] == nil {
		m[human] = map[string]int{}
	}
	m[human][judge]++
}

func (m confusion) total() (n, agree int) {
	for _, h := range claims {
		for _, j := range claims {
			n += m[h][j]
		}
		agree += m[h][h]
	}
	return n, agree
}

// kappa is Cohen's kappa of the two raters: (po - pe) / (1 - pe).
func (m confusion) kappa() float64 {
	n, agree := m.total()
	if n == 0 {
		return 0
	}
	po := float64(agree) / float64(n)
	var pe float64
	for _, c := range claims {
		var rowSum, colSum int
		for _, o := range claims {
			rowSum += m[c][o]
			colSum += m[o][c]
		}
		pe += float64(rowSum) / float64(n) * float64(colSum) / float64(n)
	}
	if pe == 1 {
		return 1
	}
	return (po - pe) / (1 - pe)
}

func (m confusion) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-18s %16s %16s %16s\n", "human \\ rules", ClaimedSuccess, ReportedFailure, Unclear)
	for _, h := range claims {
		fmt.Fprintf(&b, "%-18s %16d %16d %16d\n", h, m[h][ClaimedSuccess], m[h][ReportedFailure], m[h][Unclear])
	}
	return b.String()
}

func TestKappa(t *testing.T) {
	tests := []struct {
		name  string
		pairs [][2]string
		want  float64
	}{
		{"perfect", [][2]string{{"claimed_success", "claimed_success"}, {"reported_failure", "reported_failure"}}, 1},
		// po = 0.5, pe = 0.5: agreement no better than chance.
		{"chance", [][2]string{
			{"claimed_success", "claimed_success"}, {"claimed_success", "reported_failure"},
			{"reported_failure", "claimed_success"}, {"reported_failure", "reported_failure"},
		}, 0},
		// Cohen's textbook table: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no: po = .7, pe = .5, kappa = .4.
		{"textbook", append(append(append(
			repeatPair("claimed_success", "claimed_success", 20),
			repeatPair("claimed_success", "reported_failure", 5)...),
			repeatPair("reported_failure", "claimed_success", 10)...),
			repeatPair("reported_failure", "reported_failure", 15)...), 0.4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := confusion{}
			for _, p := range tt.pairs {
				m.add(p[0], p[1])
			}
			if got := m.kappa(); got < tt.want-1e-9 || got > tt.want+1e-9 {
				t.Errorf("kappa = %v, want %v", got, tt.want)
			}
		})
	}
}

func repeatPair(a, b string, n int) [][2]string {
	out := make([][2]string, n)
	for i := range out {
		out[i] = [2]string{a, b}
	}
	return out
}

// TestJudgeAgreement measures the rule judge against the human labels and fails when
// its kappa falls below the committed baseline.
func TestJudgeAgreement(t *testing.T) {
	set := readLabelled(t, "testdata/closing-messages.jsonl")
	if len(set) < 70 {
		t.Fatalf("the labelled set has %d messages, want at least 70", len(set))
	}
	var baseline struct {
		Kappa float64 `json:"kappa"`
	}
	b, err := os.ReadFile("testdata/judge-baseline.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &baseline); err != nil {
		t.Fatalf("testdata/judge-baseline.json: %v", err)
	}

	m := confusion{}
	ids := map[string]bool{}
	for _, l := range set {
		if ids[l.ID] {
			t.Errorf("id %q is used twice", l.ID)
		}
		ids[l.ID] = true
		if !isClaim(l.Label) {
			t.Errorf("%s: label %q is not a claim", l.ID, l.Label)
			continue
		}
		c := Extract(l.Profile, []byte(l.Stdout), nil, 0)
		j, err := Rules{}.Classify(context.Background(), c, spec.ClaimSpec{})
		if err != nil {
			t.Fatalf("%s: %v", l.ID, err)
		}
		m.add(l.Label, j.Claim)
		if j.Claim != l.Label {
			t.Logf("disagree %s: human %s, rules %s (%s): %q", l.ID, l.Label, j.Claim, j.Reason, clip(c.Text, 160))
		}
	}
	n, agree := m.total()
	accuracy, kappa := float64(agree)/float64(n), m.kappa()
	summary := fmt.Sprintf("judge agreement (rules vs human, n=%d): accuracy %.3f, kappa %.3f (baseline %.2f)", n, accuracy, kappa, baseline.Kappa)
	t.Logf("%s\n%s", summary, m)
	fmt.Printf("%s\n%s", summary, m)
	if kappa < baseline.Kappa {
		t.Errorf("kappa %.3f fell below the baseline %.2f in testdata/judge-baseline.json", kappa, baseline.Kappa)
	}
}

func isClaim(s string) bool {
	for _, c := range claims {
		if s == c {
			return true
		}
	}
	return false
}
