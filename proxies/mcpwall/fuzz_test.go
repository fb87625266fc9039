package mcpwall_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/crashwall/chaos/proxies/mcpwall"
)

// FuzzGuard feeds any bytes to the stdio guard. It must never panic or fail; every
// line it answers must be a JSON-RPC error; every line it lets through must be one the
// SDK's stream reader takes without ending the session; and every line that is not
// blank is either answered or let through.
func FuzzGuard(f *testing.F) {
	for _, m := range badMessages {
		if len(m.msg) < 1<<10 {
			f.Add([]byte(m.msg + "\n"))
		}
	}
	for _, s := range []string{
		initializeMsg(1) + "\n" + initializedMsg + "\n" + callMsg(2, "update_ticket", `{"field":"priority","value":"urgent"}`) + "\n",
		`{"jsonrpc":"2.0","id":1,"method":"ping"}` + " \t\r\n",
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]` + "\n",
		`{"jsonrpc":"2.0","id":1,"method":"ping"}{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n",
		"\n\n  \r\n" + strings.Repeat("x", 200) + "\n" + strings.Repeat(" ", 100),
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"a","result":{}}` + "\n" + `{"jsonrpc":"2.0","id":"b","error":{"code":1,"message":"m"}}`,
		"\ufeff" + `{"jsonrpc":"2.0","id":1,"method":"ping"}`,
	} {
		f.Add([]byte(s))
	}
	const max = 128
	f.Fuzz(func(t *testing.T, data []byte) {
		if resp, reason := mcpwall.CheckMessage(data); resp != nil {
			checkErrorLine(t, resp)
			if reason == "" {
				t.Errorf("CheckMessage(%q): an error with no reason", data)
			}
		}

		var good, answered bytes.Buffer
		rejects := 0
		if err := mcpwall.GuardLines(bytes.NewReader(data), &good, &answered, max, func(string) { rejects++ }); err != nil {
			t.Fatalf("guardLines: %v", err)
		}
		nAnswered := 0
		for _, line := range splitLines(answered.Bytes()) {
			checkErrorLine(t, line)
			nAnswered++
		}
		nGood := 0
		for _, line := range splitLines(good.Bytes()) {
			checkSDKTakes(t, line)
			nGood++
		}
		if rejects != nAnswered {
			t.Errorf("%d rejections reported, %d lines answered", rejects, nAnswered)
		}
		want := 0
		for i, line := range bytes.Split(data, []byte("\n")) {
			last := i == bytes.Count(data, []byte("\n"))
			size := len(line)
			if !last {
				size++ // the newline counts towards the limit
			}
			if size > max+2 || len(bytes.TrimSpace(line)) > 0 {
				want++
			}
		}
		if nGood+nAnswered != want {
			t.Errorf("%d lines in, %d let through and %d answered", want, nGood, nAnswered)
		}
	})
}

func splitLines(b []byte) [][]byte {
	if len(b) == 0 {
		return nil
	}
	if b[len(b)-1] != '\n' {
		return [][]byte{append([]byte(nil), b...)} // an unterminated line is a failure the checks report
	}
	return bytes.Split(b[:len(b)-1], []byte("\n"))
}

// checkErrorLine: line is a JSON-RPC 2.0 error response, with the id member present
// (null when the request's id could not be read).
func checkErrorLine(t *testing.T, line []byte) {
	t.Helper()
	var resp struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
		Error   *jsonrpc.Error  `json:"error"`
	}
	if err := json.Unmarshal(line, &resp); err != nil {
		t.Fatalf("the guard answered %q: not JSON: %v", line, err)
	}
	var id any
	_ = json.Unmarshal(resp.ID, &id)
	switch id.(type) {
	case nil, string, float64:
	default:
		t.Fatalf("the guard answered %q: the id is not null, a string or a number", line)
	}
	if resp.JSONRPC != "2.0" || resp.ID == nil || resp.Result != nil || resp.Error == nil || resp.Error.Code == 0 || resp.Error.Message == "" {
		t.Fatalf("the guard answered %q: not a JSON-RPC 2.0 error response", line)
	}
}

// checkSDKTakes: line is read by the SDK's stream transport as it reads stdin (one JSON
// value, then nothing but the newline) and decodes as one JSON-RPC message.
func checkSDKTakes(t *testing.T, line []byte) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(append(line, '\n')))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		t.Fatalf("the guard let %q through: the SDK cannot read it: %v", line, err)
	}
	var next [1]byte
	if n, _ := dec.Buffered().Read(next[:]); n > 0 && next[0] != '\n' && next[0] != '\r' {
		t.Fatalf("the guard let %q through: the SDK ends the session on the bytes after it", line)
	}
	if _, err := jsonrpc.DecodeMessage(raw); err != nil {
		t.Fatalf("the guard let %q through: not a JSON-RPC message: %v", line, err)
	}
	if len(raw) > 0 && raw[0] == '[' {
		t.Fatalf("the guard let a batch through: %q", line)
	}
}
