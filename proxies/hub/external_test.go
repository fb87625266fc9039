package hub_test

import (
	"encoding/json"
	"testing"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/record"
)

// TestRecordCountsRefusedRequests: a part's refused request (the browser guard's denied
// write, a rejected row through Hub.Record) counts in session_end's calls and Stats, as
// limits.max_calls counts it; a recorded call counts too, and only a call can fire.
func TestRecordCountsRefusedRequests(t *testing.T) {
	h, path := openTicketHub(t, faults.Condition{})
	for _, r := range []record.Row{
		{Type: record.TypeCall, Transport: "cdp", Tool: "browser", Args: json.RawMessage(`{"url":"/"}`)},
		{Type: record.TypeRejected, Transport: "cdp", Tool: "browser", Args: json.RawMessage(`{"url":"/save"}`), Reason: "denied write"},
		{Type: record.TypeRejected, Transport: "cdp", Tool: "browser", Args: json.RawMessage(`{"url":"/save"}`), Reason: "denied write"},
		{Type: record.TypeError, Transport: "cdp", Reason: "not a request"},
	} {
		if err := h.Record(r); err != nil {
			t.Fatal(err)
		}
	}
	if got := h.Stats().Calls; got != 3 {
		t.Errorf("Stats().Calls = %d, want 3 (a call and two denied writes)", got)
	}
	if err := h.Close("done"); err != nil {
		t.Fatal(err)
	}
	if end := readRecord(t, path).End; end == nil || end.Calls != 3 {
		t.Errorf("session_end %+v, want calls 3", end)
	}
}
