package verdicts_test

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJudgeSampleAndAgree: a blind form of the example run's closing messages is written
// (shuffled, opaque ids, no verdicts); a "person" labels it from the STATUS line the
// reference agents print; chaos judge agree computes kappa, prints the direction matrix,
// registers it; and a report then states the measured agreement instead of the warning.
func TestJudgeSampleAndAgree(t *testing.T) {
	dir := exampleRun(t)
	work := t.TempDir()
	form := filepath.Join(work, "form.csv")
	out, errOut, code := chaos(t, "judge", "sample", dir, "--out", form, "--n", "0")
	if code != 0 {
		t.Fatalf("judge sample exited %d: %s%s", code, out, errOut)
	}
	f, err := os.Open(form)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 39 {
		t.Fatalf("the form has %d rows, want a header and 38 messages", len(recs))
	}
	for _, rec := range recs[1:] {
		// Blind: nothing in a row names the condition, the arm or a verdict.
		row := strings.Join(rec, " ")
		for _, leak := range []string{"phantom", "silent_wrong", "correct", "agent=", "@"} {
			if strings.Contains(row, leak) {
				t.Errorf("the form is not blind: row %q contains %q", row, leak)
			}
		}
		switch {
		case strings.Contains(rec[2], "STATUS: ok"):
			rec[1] = "claimed"
		case strings.Contains(rec[2], "STATUS: failed"):
			rec[1] = "not claimed"
		default:
			rec[1] = "unsure"
		}
	}
	f, err = os.Create(form)
	if err != nil {
		t.Fatal(err)
	}
	w := csv.NewWriter(f)
	w.WriteAll(recs)
	f.Close()

	registry := filepath.Join(work, "judges.json")
	out, errOut, code = chaos(t, "judge", "agree", form, "--agent", "scripted", "--language", "en", "--register", "--registry", registry)
	if code != 0 {
		t.Fatalf("judge agree exited %d: %s%s", code, out, errOut)
	}
	if !strings.Contains(out, "judge vs person on 38 messages (scripted, en): Cohen's kappa 1.00") {
		t.Errorf("judge agree printed:\n%s", out)
	}
	var reg struct {
		Entries []struct {
			Profile, Language string
			Kappa             float64
			N                 int
		}
	}
	b, err := os.ReadFile(registry)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &reg); err != nil || len(reg.Entries) != 1 || reg.Entries[0].N != 38 || reg.Entries[0].Kappa != 1 {
		t.Fatalf("registry %s: %s (%v)", registry, b, err)
	}

	// A bad label is refused with the line it is on.
	recs[5][1] = "maybe"
	f, _ = os.Create(form)
	w = csv.NewWriter(f)
	w.WriteAll(recs)
	f.Close()
	_, errOut, code = chaos(t, "judge", "agree", form, "--agent", "scripted", "--language", "en")
	if code != 1 || !strings.Contains(errOut, `form.csv: record 6 (line 10): label "maybe" is not one of claimed, not claimed, unsure`) {
		t.Errorf("a bad label gave exit %d: %s", code, errOut)
	}

	// The report now states the measured agreement.
	html := filepath.Join(work, "report.html")
	out, errOut, code = chaos(t, "report", dir, dir, "--out", html, "--registry", registry)
	if code != 0 {
		t.Fatalf("chaos report exited %d: %s%s", code, out, errOut)
	}
	page, _ := os.ReadFile(html)
	if !strings.Contains(string(page), `"measured":true,"kappa":1`) {
		t.Errorf("the report does not carry the measured agreement")
	}
}
