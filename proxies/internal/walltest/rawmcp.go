package walltest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// RawMCP is the least an MCP client over streamable HTTP does, written with net/http
// alone: one JSON-RPC message a POST, with the session's Mcp-Session-Id and the Accept
// header the spec asks for, the answer read whole. The benchmarks measure the wall
// with it rather than with a client's own costs, and the tests send through it what no
// well-behaved client sends.
type RawMCP struct {
	URL     string // the /mcp endpoint
	Session string // Mcp-Session-Id, once initialized
	// Protocol is the version initialize agreed on, sent as MCP-Protocol-Version
	// when set.
	Protocol string
	Client   *http.Client
}

// RawAnswer is one POST's answer.
type RawAnswer struct {
	Status int
	Header http.Header
	Body   []byte
}

// NewRawMCP opens a session on url through client (nil: one of its own): initialize,
// then notifications/initialized, as a client does.
func NewRawMCP(tb testing.TB, url string, client *http.Client) *RawMCP {
	tb.Helper()
	if client == nil {
		client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	}
	c := &RawMCP{URL: url, Client: client}
	tb.Cleanup(c.Client.CloseIdleConnections)
	init := c.Post(tb, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, nil)
	var res struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	if init.Status != http.StatusOK || json.Unmarshal(init.JSON(tb), &res) != nil || res.Result.ProtocolVersion == "" {
		tb.Fatalf("initialize: %d %s", init.Status, init.Body)
	}
	c.Session, c.Protocol = init.Header.Get("Mcp-Session-Id"), res.Result.ProtocolVersion
	if c.Session == "" {
		tb.Fatalf("initialize answered without an Mcp-Session-Id: %v", init.Header)
	}
	if a := c.Post(tb, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil); a.Status != http.StatusAccepted {
		tb.Fatalf("notifications/initialized: %d %s", a.Status, a.Body)
	}
	return c
}

// Post sends one body with the session's headers (header overrides them; an empty
// value removes one) and reads the answer whole.
func (c *RawMCP) Post(tb testing.TB, body string, header map[string]string) RawAnswer {
	tb.Helper()
	return c.Do(tb, http.MethodPost, body, header)
}

// Do is Post with another method.
func (c *RawMCP) Do(tb testing.TB, method, body string, header map[string]string) RawAnswer {
	tb.Helper()
	req, err := http.NewRequest(method, c.URL, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.Session != "" {
		req.Header.Set("Mcp-Session-Id", c.Session)
	}
	if c.Protocol != "" {
		req.Header.Set("MCP-Protocol-Version", c.Protocol)
	}
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := c.Client.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return RawAnswer{resp.StatusCode, resp.Header, b}
}

// Call sends one request and returns the JSON-RPC message it is answered with.
func (c *RawMCP) Call(tb testing.TB, body string) []byte {
	tb.Helper()
	a := c.Post(tb, body, nil)
	if a.Status != http.StatusOK {
		tb.Fatalf("%s: %d %s", body, a.Status, a.Body)
	}
	return a.JSON(tb)
}

// JSON is the answer's JSON-RPC message: the body of a JSON answer, the data of the one
// message event of an event stream.
func (a RawAnswer) JSON(tb testing.TB) []byte {
	tb.Helper()
	if !strings.HasPrefix(a.Header.Get("Content-Type"), "text/event-stream") {
		return a.Body
	}
	var data []byte
	for _, line := range bytes.Split(a.Body, []byte("\n")) {
		if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			if data != nil {
				tb.Fatalf("an event stream of more than one message: %s", a.Body)
			}
			data = d
		}
	}
	if data == nil {
		tb.Fatalf("an event stream without a message: %s", a.Body)
	}
	return data
}
