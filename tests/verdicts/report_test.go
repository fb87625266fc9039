package verdicts_test

import (
	"bytes"
	"encoding/json"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportInChromium opens the example run's report.html in Debian's Chromium (headless,
// driven by playwright-core from tests/js), clicks the phantom-success cell of the blind
// arm and its trial, and checks that the recorded calls appear, the faulted call marked;
// the screenshot it takes must be a real PNG.
func TestReportInChromium(t *testing.T) {
	if _, err := os.Stat(filepath.Join(root, "tests/js/node_modules/playwright-core")); err != nil {
		t.Fatal("playwright-core is not installed: run npm ci in tests/js (make test does)")
	}
	if _, err := exec.LookPath("chromium"); err != nil {
		t.Fatal("Debian's chromium is not installed: apt-get install chromium (make test does)")
	}
	dir := exampleRun(t)
	html := filepath.Join(dir, "report.html")
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	for _, forbidden := range []string{"<script src", "<link ", "@import", "http://", "https://"} {
		if bytes.Contains(b, []byte(forbidden)) {
			t.Errorf("report.html is not self-contained: it contains %q", forbidden)
		}
	}
	shot := filepath.Join(t.TempDir(), "report.png")
	if dest := os.Getenv("CHAOS_SCREENSHOT"); dest != "" {
		shot = dest
	}
	cmd := exec.Command("node", filepath.Join(root, "tests/js/report.mjs"), html, shot)
	cmd.Env = append(os.Environ(), "CHAOS_CELL_CONDITION=phantom_success@update_ticket")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("report.mjs: %v\nstdout: %s\nstderr: %s", err, out.String(), errb.String())
	}
	var got struct {
		Title     string   `json:"title"`
		Cells     int      `json:"cells"`
		CellText  string   `json:"cellText"`
		Trials    int      `json:"trials"`
		Calls     int      `json:"calls"`
		FiredRows int      `json:"firedRows"`
		CallTools []string `json:"callTools"`
		Closing   string   `json:"closing"`
		Agreement string   `json:"agreement"`
		Requests  []string `json:"requests"`
		Errors    []string `json:"errors"`

		TrialsInViewBeforeClick bool   `json:"trialsInViewBeforeClick"`
		TrialsInView            bool   `json:"trialsInView"`
		CallsInView             bool   `json:"callsInView"`
		CellHash                string `json:"cellHash"`
		TrialHash               string `json:"trialHash"`
		NACells                 int    `json:"naCells"`
		NAGreen                 int    `json:"naGreen"`
		CellLink                link   `json:"cellLink"`
		TrialLink               link   `json:"trialLink"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("report.mjs printed %q: %v", out.String(), err)
	}
	t.Logf("report in Chromium: %+v", got)
	// A click brings its panel into view (it sits below the whole matrix), and names what
	// it opened in the address; the address opens it again in a fresh page.
	if got.TrialsInViewBeforeClick {
		t.Errorf("the cell panel was in view before any click: the window is too tall for this test to show scrolling")
	}
	if !got.TrialsInView || !got.CallsInView {
		t.Errorf("after the clicks, the trials in view: %v, the trial's calls in view: %v; want both", got.TrialsInView, got.CallsInView)
	}
	if want := "#cell=phantom_success%40update_ticket/"; !strings.HasPrefix(got.CellHash, want) {
		t.Errorf("the address after the cell click is %q, want it to start %q", got.CellHash, want)
	}
	if !strings.HasPrefix(got.TrialHash, "#trial=") {
		t.Errorf("the address after the trial click is %q, want #trial=...", got.TrialHash)
	}
	if l := got.CellLink; l.Trials != 1 || l.SelectedCell != "phantom_success@update_ticket" || !l.PanelInView {
		t.Errorf("opening %s: %+v, want the cell selected, its 1 trial listed and in view", got.CellHash, l)
	}
	if l := got.TrialLink; l.Calls != len(wantToolsOf) || l.Closing != 1 || !l.PanelInView {
		t.Errorf("opening %s: %+v, want the trial's %d calls and its closing message, in view", got.TrialHash, l, len(wantToolsOf))
	}
	if got.NAGreen != 0 {
		t.Errorf("%d of the %d n/a cells are coloured as a good result", got.NAGreen, got.NACells)
	}
	if got.Cells != 38 {
		t.Errorf("the matrix has %d cells, want 38 (19 conditions x 2 arms)", got.Cells)
	}
	if !strings.HasPrefix(got.CellText, "100% 1/1") {
		t.Errorf("the blind phantom-success cell reads %q, want it to start with 100%% 1/1", got.CellText)
	}
	if got.Trials != 1 {
		t.Errorf("the cell opened %d trials, want 1", got.Trials)
	}
	wantTools := wantToolsOf
	if strings.Join(got.CallTools, ",") != strings.Join(wantTools, ",") {
		t.Errorf("the trial shows calls %v, want %v", got.CallTools, wantTools)
	}
	if got.FiredRows != 1 {
		t.Errorf("%d faulted rows marked, want 1", got.FiredRows)
	}
	if !strings.Contains(got.Closing, "Done.") {
		t.Errorf("the closing message shown is %q", got.Closing)
	}
	if !strings.Contains(got.Agreement, "not measured for scripted in en") {
		t.Errorf("the report does not warn that the judge was not measured: %q", got.Agreement)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	if img.Bounds().Dx() < 400 || img.Bounds().Dy() < 400 {
		t.Errorf("the screenshot is only %v", img.Bounds())
	}
	t.Logf("screenshot: %s (%v)", shot, img.Bounds())
}

// link is what report.mjs found in a fresh page opened on a #cell= or #trial= address.
type link struct {
	Trials       int    `json:"trials"`
	SelectedCell string `json:"selectedCell"`
	Calls        int    `json:"calls"`
	Closing      int    `json:"closing"`
	PanelInView  bool   `json:"panelInView"`
}

// wantToolsOf is the blind agent's phantom-success trial: read_email, update_ticket x2 and
// the session end.
var wantToolsOf = []string{"read_email", "update_ticket", "update_ticket", "session end"}

// TestJUnit: one test case per condition and arm, failed where silent wrong occurred.
func TestJUnit(t *testing.T) {
	dir := exampleRun(t)
	b, err := os.ReadFile(filepath.Join(dir, "junit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{
		`<testsuites name="chaos report: support-ticket`,
		`tests="38" failures="7" skipped="5"`,
		`<testcase name="phantom_success@update_ticket" classname="chaos.agent=blind">`,
		`<failure message="silent wrong in 1/1 = 100% [`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("junit.xml lacks %q:\n%s", want, s)
		}
	}
}
