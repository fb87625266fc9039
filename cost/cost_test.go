package cost

import "testing"

func TestLookup(t *testing.T) {
	for _, tc := range []struct {
		model string
		want  float64 // input price
		ok    bool
	}{
		{"claude-sonnet-4-5-20250929", 3, true},
		{"claude-opus-4-5-20251101", 5, true},
		{"claude-opus-4-1-20250805", 15, true},
		{"gpt-4o-mini-2024-07-18", 0.15, true},
		{"gpt-4o-2024-08-06", 2.5, true},
		{"gpt-4.1-nano", 0.1, true},
		{"claude-opus-4-20250514", 15, true},
		{"claude-sonnet-4-20250514", 3, true},
		{"claude-haiku-4-5-20251001", 1, true},
		// A version the table does not name is unpriced, not priced as an older one that
		// begins its name (claude-opus-4: three times dearer than claude-opus-4-5).
		{"claude-opus-4-8", 0, false},
		{"claude-sonnet-4-6-20260101", 0, false},
		{"gpt-4o-mini-tts", 0, false},
		{"standin", 0, false},
		{"", 0, false},
	} {
		p, ok := Defaults.Lookup(tc.model)
		if ok != tc.ok || p.Input != tc.want {
			t.Errorf("%q: %v %v, want %v %v", tc.model, p.Input, ok, tc.want, tc.ok)
		}
	}
}

func TestUsageSums(t *testing.T) {
	table := Defaults.With(Table{"standin": {Input: 1, Output: 2}})
	var u Usage
	u.AddCall(table, "standin", Tokens{Input: 1_000_000, Output: 500_000})
	u.AddCall(table, "claude-haiku-4-5", Tokens{Input: 1000, CacheRead: 10_000, CacheWrite: 2000, Output: 100})
	u.AddCall(table, "mystery", Tokens{Input: 5})
	// 1 + 1 = 2 for the stand-in; haiku: (1000*1 + 10000*0.1 + 2000*1.25 + 100*5)/1e6 = 0.005
	if u.USD != 2.005 || u.Calls != 3 || u.Input != 1_001_005 || len(u.Unpriced) != 1 || u.Complete() {
		t.Errorf("%+v", u)
	}
	var run Usage
	run.Add(u)
	run.Add(u)
	if run.USD != 4.01 || run.Calls != 6 || len(run.Unpriced) != 1 {
		t.Errorf("%+v", run)
	}
}

func TestFormat(t *testing.T) {
	for usd, want := range map[float64]string{0: "$0", 0.0012: "$0.0012", 1.5: "$1.50", 1234.567: "$1,234.57", 123456.7: "$123,456.70"} {
		if got := Format(usd); got != want {
			t.Errorf("Format(%v) = %q, want %q", usd, got, want)
		}
	}
}
