package proxies

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/spec"
)

// FuzzRESTBody posts any body to /tools/update_ticket, twice, under any of the
// example's conditions. The wall must answer every time with JSON, and with a server
// error only when a fault says so: 503 for a tool failure, 500 for a fault that could
// not apply ("chaos: ..."). Anything else a body can cause is the client's (4xx).
func FuzzRESTBody(f *testing.F) {
	s, err := spec.Load(exampleSpec)
	if err != nil {
		f.Fatal(err)
	}
	conds, err := faults.Generate(s)
	if err != nil {
		f.Fatal(err)
	}
	for i, body := range []string{
		`{"field":"priority","value":"urgent"}`, `{"field":"team","value":"payments","extra":[1,{}]}`,
		``, `null`, `[1]`, `"x"`, `{bad`, `{"field":1,"value":"x"}`, `{"field":"priority"}`,
		`{"field":"\u0000","value":"\ud800"}`, "{\"field\":\"a\",\"value\":\"\xff\"}", `{"field":"a","value":"b"} trailing`,
		strings.Repeat("[", 20000), `{"field":"a","value":"b","field":"c"}`, `1e400`,
	} {
		f.Add(uint8(i), []byte(body))
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		cond := conds[int(which)%len(conds)]
		h := newHub(t, cond.ID, record.Discard())
		handler := h.Handler()
		for attempt := 1; attempt <= 2; attempt++ {
			w := httptest.NewRecorder()
			req := httptest.NewRequest("POST", "/tools/update_ticket", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			handler.ServeHTTP(w, req)
			got := w.Body.Bytes()
			if ct := w.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("%s, attempt %d: Content-Type %q", cond.ID, attempt, ct)
			}
			if !json.Valid(got) {
				t.Fatalf("%s, attempt %d: status %d with a body that is not JSON: %q", cond.ID, attempt, w.Code, got)
			}
			switch {
			case w.Code == http.StatusOK:
			case w.Code == http.StatusServiceUnavailable, w.Code == http.StatusUnauthorized, w.Code == http.StatusBadRequest:
			case w.Code == http.StatusInternalServerError && bytes.Contains(got, []byte(`"chaos: `)):
			default:
				t.Fatalf("%s, attempt %d: status %d for body %q: %s", cond.ID, attempt, w.Code, body, got)
			}
			if w.Code != http.StatusOK {
				var e struct {
					Error string `json:"error"`
				}
				if err := json.Unmarshal(got, &e); err != nil || e.Error == "" {
					t.Errorf("%s, attempt %d: status %d body %s, want {\"error\": ...}", cond.ID, attempt, w.Code, got)
				}
			}
		}
	})
}

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
		if resp, reason := CheckMessage(data); resp != nil {
			checkErrorLine(t, resp)
			if reason == "" {
				t.Errorf("CheckMessage(%q): an error with no reason", data)
			}
		}

		var good, answered bytes.Buffer
		rejects := 0
		if err := guardLines(bytes.NewReader(data), &good, &answered, max, func(string) { rejects++ }); err != nil {
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

// guardLines runs the guard's reading half over in: each line it hands over as a message
// is written to good as it was read (and checked to be that message), each answer to out.
func guardLines(in io.Reader, good, out io.Writer, max int, onReject func(string)) error {
	c := &guardConn{br: bufio.NewReaderSize(in, 64<<10), max: max, onReject: onReject, ids: newIDTable(), out: out, closed: make(chan struct{})}
	for {
		msg, err := c.readMessage()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		want, err := jsonrpc.DecodeMessage(c.line)
		if err != nil {
			return fmt.Errorf("the guard handed over %q, which the SDK refuses: %w", c.line, err)
		}
		w, _ := jsonrpc.EncodeMessage(want)
		if req, ok := msg.(*jsonrpc.Request); ok {
			if name, ok := req.ID.Raw().(string); ok && strings.HasPrefix(name, aliasPrefix) {
				// An id the SDK would alter goes as an alias, by design.
				alias := *req
				alias.ID = want.(*jsonrpc.Request).ID
				msg = &alias
			}
		}
		g, _ := jsonrpc.EncodeMessage(msg)
		if !bytes.Equal(w, g) {
			return fmt.Errorf("the guard handed over %q as %s; the SDK reads %s", c.line, g, w)
		}
		good.Write(append(c.line, '\n'))
	}
}

// FuzzDecodeMessage: the guard's own decoder takes and refuses what the SDK's does, and
// takes it as the same message.
func FuzzDecodeMessage(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x","arguments":{"a":[1,{"b":null}]}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1.5,"result":{}}`,
		`{"jsonrpc":"2.0","id":"b","error":{"code":1,"message":"m","data":[1]}}`,
		`{"jsonrpc":"2.0","ID":1,"Method":"ping"}`,
		`{"jsonrpc":"1.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":true,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":5}`,
		`{"jsonrpc":"2.0","id":1,"method":""}`,
		`{"jsonrpc":"2.0","result":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","params":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}`,
		`null`, `5`, `"x"`, `{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		want, wantErr := jsonrpc.DecodeMessage(data)
		got, gotErr := decodeMessage(data)
		if (wantErr == nil) != (gotErr == nil) {
			t.Fatalf("%q: the SDK's decoder says %v, the guard's %v", data, wantErr, gotErr)
		}
		if wantErr != nil {
			return
		}
		w, _ := jsonrpc.EncodeMessage(want)
		g, _ := jsonrpc.EncodeMessage(got)
		if !bytes.Equal(w, g) {
			t.Fatalf("%q: the SDK's decoder reads %s, the guard's %s", data, w, g)
		}
	})
}
