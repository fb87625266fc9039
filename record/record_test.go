package record_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crashwall/chaos/record"
)

func openRecord(tb testing.TB) (*record.Writer, string) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "trial", "record.jsonl")
	w, err := record.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { w.Close(record.Row{Reason: "test cleanup"}) })
	return w, path
}

func mustWrite(tb testing.TB, w *record.Writer, r record.Row) record.Row {
	tb.Helper()
	got, err := w.Write(r)
	if err != nil {
		tb.Fatalf("write %s row: %v", r.Type, err)
	}
	return got
}

func TestRoundTrip(t *testing.T) {
	w, path := openRecord(t)
	if w.Path() != path {
		t.Errorf("Path() = %q, want %q", w.Path(), path)
	}
	at := time.Date(2026, 11, 2, 9, 30, 0, 0, time.UTC)
	possible := false
	rows := []record.Row{
		{
			Type: record.TypeSessionStart, Time: at, Trial: "support-ticket/phantom_success@update_ticket/1",
			Condition: "phantom_success@update_ticket", Seed: 7, Tools: []string{"read_email", "update_ticket"},
			Fault:           &record.Fault{Condition: "phantom_success@update_ticket", Family: "phantom_success", Tool: "update_ticket", What: "the first call to update_ticket: answered success, nothing stored"},
			InitialState:    map[string]any{"priority": "normal", "team": "accounts"},
			SuccessPossible: &possible,
		},
		{
			Type: record.TypeCall, Time: at.Add(time.Second), Transport: "mcp-stdio", Tool: "update_ticket",
			Args:  json.RawMessage(`{"field":"priority","value":"urgent"}`),
			Hit:   &record.Hit{Fired: true, Family: "phantom_success", How: "acknowledged, not stored"},
			Reply: `{"status": "updated"}`, Status: 200,
			State: map[string]any{"priority": "normal", "team": "accounts"},
		},
		{
			Type: record.TypeCall, Time: at.Add(2 * time.Second), Transport: "rest", Tool: "read_email",
			Hit:   &record.Hit{Fired: false, Performed: true},
			Reply: `{"error":"503"}`, IsError: true, Status: 503, RealReply: `{"body":"hi"}`,
			State: map[string]any{"priority": "normal", "team": "accounts", "n": 1.5, "list": []any{"a", true, nil}},
		},
		{Type: record.TypeRejected, Time: at.Add(3 * time.Second), Transport: "rest", Tool: "nope", Args: json.RawMessage(`"not json"`), Reason: "unknown tool", Status: 404},
		{Type: record.TypeError, Time: at.Add(4 * time.Second), Transport: "mcp-http", Reason: "could not serve"},
	}
	for i, r := range rows {
		got := mustWrite(t, w, r)
		if got.Seq != i+1 {
			t.Errorf("row %d: seq %d, want %d", i, got.Seq, i+1)
		}
		rows[i].Seq = i + 1
	}
	end := record.Row{Type: "ignored: Close sets it", Time: at.Add(5 * time.Second), Reason: "agent exited", FinalState: map[string]any{"priority": "normal", "team": "accounts"}, Calls: 2, Fired: 1}
	if err := w.Close(end); err != nil {
		t.Fatal(err)
	}
	end.Type, end.Seq = record.TypeSessionEnd, len(rows)+1
	rows = append(rows, end)

	l, err := record.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(l.Rows, rows) {
		t.Errorf("rows read back differ from rows written:\n got %+v\nwant %+v", l.Rows, rows)
	}
	if l.Start != &l.Rows[0] || l.End != &l.Rows[len(l.Rows)-1] || !l.Complete() {
		t.Errorf("Start/End not indexed: start %p end %p complete %v", l.Start, l.End, l.Complete())
	}
	if got := seqs(l.Calls()); !reflect.DeepEqual(got, []int{2, 3}) {
		t.Errorf("Calls() seqs = %v, want [2 3]", got)
	}
	if got := seqs(l.Fired()); !reflect.DeepEqual(got, []int{2}) {
		t.Errorf("Fired() seqs = %v, want [2]", got)
	}
}

func seqs(rows []record.Row) []int {
	var out []int
	for _, r := range rows {
		out = append(out, r.Seq)
	}
	return out
}

// The exact line a row becomes: fields that a row type does not use are left out, hit's
// fired and performed are always there.
func TestRowLine(t *testing.T) {
	w, path := openRecord(t)
	at := time.Date(2026, 11, 2, 9, 30, 0, 0, time.UTC)
	mustWrite(t, w, record.Row{Type: record.TypeCall, Time: at, Tool: "read_email", Hit: &record.Hit{}, Reply: "x", Status: 200, State: map[string]any{}})
	w.Close(record.Row{Time: at})
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"call","seq":1,"time":"2026-11-02T09:30:00Z","tool":"read_email","hit":{"fired":false,"performed":false},"reply":"x","status":200}` + "\n" +
		`{"type":"session_end","seq":2,"time":"2026-11-02T09:30:00Z"}` + "\n"
	if got := string(b); got != want {
		t.Errorf("record text:\n got %s\nwant %s", got, want)
	}
}

func TestCorrupt(t *testing.T) {
	good := []string{
		`{"type":"session_start","seq":1,"time":"2026-11-02T09:30:00Z","condition":"clean"}`,
		`{"type":"call","seq":2,"time":"2026-11-02T09:30:01Z","tool":"read_email","reply":"ok","status":200}`,
	}
	wantRows := []record.Row{
		{Type: record.TypeSessionStart, Seq: 1, Time: time.Date(2026, 11, 2, 9, 30, 0, 0, time.UTC), Condition: "clean"},
		{Type: record.TypeCall, Seq: 2, Time: time.Date(2026, 11, 2, 9, 30, 1, 0, time.UTC), Tool: "read_email", Reply: "ok", Status: 200},
	}
	tests := []struct {
		name     string
		text     string
		wantLine int
		wantErr  string
	}{
		{
			name:     "truncated last line",
			text:     good[0] + "\n" + good[1] + "\n" + `{"type":"call","seq":3,"time":"2026-11-02T09:3`,
			wantLine: 3,
			wantErr:  "unexpected end of JSON input",
		},
		{
			name:     "corrupt middle line",
			text:     good[0] + "\n" + good[1] + "\n" + `{"type":"call","seq":3,,}` + "\n" + `{"type":"session_end","seq":4,"time":"2026-11-02T09:30:05Z"}` + "\n",
			wantLine: 3,
			wantErr:  "invalid character ',' looking for beginning of object key string",
		},
		{
			name:     "blank lines count",
			text:     good[0] + "\n\n" + good[1] + "\n\n" + `{"seq":3}` + "\n",
			wantLine: 5,
			wantErr:  "row has no type",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "record.jsonl")
			if err := os.WriteFile(path, []byte(tt.text), 0o644); err != nil {
				t.Fatal(err)
			}
			l, err := record.ReadFile(path)
			var ce *record.CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v (%T), want a *record.CorruptError", err, err)
			}
			if ce.Path != path || ce.Line != tt.wantLine || ce.Err.Error() != tt.wantErr {
				t.Errorf("CorruptError{Path: %q, Line: %d, Err: %q}, want {%q, %d, %q}", ce.Path, ce.Line, ce.Err, path, tt.wantLine, tt.wantErr)
			}
			if got, want := err.Error(), path+":"+strconv.Itoa(tt.wantLine)+": corrupt record row: "+tt.wantErr; got != want {
				t.Errorf("message %q, want %q", got, want)
			}
			if l == nil {
				t.Fatal("no log returned with the error")
			}
			if !reflect.DeepEqual(l.Rows, wantRows) {
				t.Errorf("rows before the corrupt line:\n got %+v\nwant %+v", l.Rows, wantRows)
			}
			if l.Start != &l.Rows[0] || l.End != nil || l.Complete() {
				t.Errorf("Start %p End %p Complete %v: want the start row, no end, incomplete", l.Start, l.End, l.Complete())
			}
		})
	}
}

func TestReadFileMissing(t *testing.T) {
	l, err := record.ReadFile(filepath.Join(t.TempDir(), "none.jsonl"))
	var ce *record.CorruptError
	if l != nil || err == nil || errors.As(err, &ce) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadFile of a missing file = %v, %v; want nil and a not-exist error", l, err)
	}
}

func TestConcurrentWrites(t *testing.T) {
	const writers, each = 16, 50
	w, path := openRecord(t)
	var mu sync.Mutex
	var seen []int
	w.OnRow(func(r record.Row) {
		mu.Lock()
		seen = append(seen, r.Seq)
		mu.Unlock()
	})
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				// A reply long enough that an interleaved write would show.
				reply := strings.Repeat(string(rune('a'+g%26)), 1000+i)
				if _, err := w.Write(record.Row{Type: record.TypeCall, Tool: "t", Reply: reply, State: map[string]any{"g": g, "i": i}}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := w.Close(record.Row{Reason: "done"}); err != nil {
		t.Fatal(err)
	}

	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	bySeq := map[int]bool{}
	lines := 0
	for sc.Scan() {
		lines++
		if !json.Valid(sc.Bytes()) {
			t.Fatalf("line %d is not valid JSON: %.80s", lines, sc.Text())
		}
		var r record.Row
		_ = json.Unmarshal(sc.Bytes(), &r)
		if bySeq[r.Seq] {
			t.Errorf("seq %d appears twice", r.Seq)
		}
		bySeq[r.Seq] = true
		if r.Type == record.TypeCall && r.Reply != strings.Repeat(r.Reply[:1], len(r.Reply)) {
			t.Errorf("line %d: reply mixes writers", lines)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if want := writers*each + 1; lines != want || len(bySeq) != want {
		t.Errorf("%d lines, %d distinct seqs; want %d of each", lines, len(bySeq), want)
	}
	for s := 1; s <= writers*each+1; s++ {
		if !bySeq[s] {
			t.Errorf("seq %d is missing", s)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != writers*each+1 {
		t.Errorf("OnRow saw %d rows, want %d", len(seen), writers*each+1)
	}
	for i, s := range seen {
		if s != i+1 {
			t.Fatalf("OnRow saw seq %d at %d: rows reach OnRow out of order", s, i)
		}
	}
}

func TestCloseOnce(t *testing.T) {
	w, path := openRecord(t)
	mustWrite(t, w, record.Row{Type: record.TypeSessionStart, Condition: "clean"})
	if w.Closed() {
		t.Fatal("Closed() before Close")
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = w.Close(record.Row{Reason: "ending " + strconv.Itoa(i), Calls: i})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Close %d: %v", i, err)
		}
	}
	if !w.Closed() {
		t.Error("Closed() after Close is false")
	}
	if r, err := w.Write(record.Row{Type: record.TypeCall}); !errors.Is(err, record.ErrClosed) || r.Seq != 0 {
		t.Errorf("Write after Close = seq %d, %v; want seq 0, record.ErrClosed", r.Seq, err)
	}
	l, err := record.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, r := range l.Rows {
		types = append(types, r.Type)
	}
	if want := []string{record.TypeSessionStart, record.TypeSessionEnd}; !reflect.DeepEqual(types, want) {
		t.Fatalf("row types %v, want %v", types, want)
	}
	if l.End.Seq != 2 || l.End.Reason != "ending "+strconv.Itoa(l.End.Calls) {
		t.Errorf("session_end %+v: want seq 2 and the reason of the one Close that wrote it", *l.End)
	}
}

func TestDiscard(t *testing.T) {
	w := record.Discard()
	var got []record.Row
	w.OnRow(func(r record.Row) { got = append(got, r) })
	mustWrite(t, w, record.Row{Type: record.TypeCall, Tool: "a"})
	if err := w.Close(record.Row{Reason: "done"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(record.Row{Reason: "again"}); err != nil {
		t.Fatal(err)
	}
	if w.Path() != "" || len(got) != 2 || got[0].Seq != 1 || got[0].Tool != "a" || got[1].Type != record.TypeSessionEnd || got[1].Seq != 2 || got[1].Reason != "done" {
		t.Errorf("Discard: path %q, rows %+v", w.Path(), got)
	}
}
