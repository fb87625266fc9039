package httpwall_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/proxies/httpwall"
	"github.com/crashwall/chaos/proxies/internal/walltest"
)

// wallRequest is one HTTP request to a served hub, as a browser or a program sends it.
type wallRequest struct {
	name   string
	method string
	path   string
	host   string // "" for the server's own address
	header map[string]string
	body   string
	want   int
}

func (c wallRequest) do(tb testing.TB, base string) (int, string) {
	tb.Helper()
	req, err := http.NewRequest(c.method, base+c.path, strings.NewReader(c.body))
	if err != nil {
		tb.Fatal(err)
	}
	if c.host != "" {
		req.Host = c.host
	}
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const writeArgs = `{"field":"priority","value":"urgent"}`

// TestHTTPSurface: what a web page can make a browser send to a wall on loopback (a
// request to a rebound name, a cross-site POST of text/plain, which needs no CORS
// preflight) is refused on every route and reaches no tool; programs that send JSON to
// the loopback address are served.
func TestHTTPSurface(t *testing.T) {
	json := map[string]string{"Content-Type": "application/json"}
	cases := []wallRequest{
		{"cross-site text/plain POST to a rebound name", "POST", "/tools/update_ticket", "evil.example.com", map[string]string{"Content-Type": "text/plain", "Origin": "http://evil.example.com", "Sec-Fetch-Site": "cross-site"}, writeArgs, 403},
		{"JSON to a rebound name", "POST", "/tools/update_ticket", "evil.example.com", json, writeArgs, 403},
		{"rebound name on /mcp", "POST", "/mcp", "evil.example.com:80", json, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, 403},
		{"rebound name on /events", "GET", "/events", "evil.example.com", nil, "", 403},
		{"rebound name on /openapi.json", "GET", "/openapi.json", "evil.example.com", nil, "", 403},
		{"rebound name on the model proxy's path", "POST", "/llm/v1/chat/completions", "evil.example.com", json, `{}`, 403},
		{"cross-site origin", "POST", "/tools/update_ticket", "", map[string]string{"Content-Type": "application/json", "Origin": "http://evil.example.com"}, writeArgs, 403},
		{"cross-site fetch metadata", "POST", "/tools/update_ticket", "", map[string]string{"Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"}, writeArgs, 403},
		{"text/plain", "POST", "/tools/update_ticket", "", map[string]string{"Content-Type": "text/plain;charset=UTF-8"}, writeArgs, 415},
		{"a form", "POST", "/tools/update_ticket", "", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, writeArgs, 415},
		{"multipart", "POST", "/tools/update_ticket", "", map[string]string{"Content-Type": "multipart/form-data; boundary=x"}, writeArgs, 415},
		{"no content type", "POST", "/tools/update_ticket", "", nil, writeArgs, 415},
		// What programs send is served: the write below is the only one that lands.
		{"JSON from a program", "POST", "/tools/update_ticket", "", json, `{"field":"team","value":"payments"}`, 200},
		{"JSON with a charset, to localhost", "POST", "/tools/read_email", "localhost", map[string]string{"Content-Type": "application/json; charset=utf-8"}, `{}`, 200},
		{"same-origin browser request", "POST", "/tools/read_email", "", map[string]string{"Content-Type": "application/json", "Sec-Fetch-Site": "same-origin"}, `{}`, 200},
		{"GET from a program", "GET", "/openapi.json", "", nil, "", 200},
	}
	h, path := walltest.NewTrial(t, faults.CleanID)
	srv := walltest.ServeHTTP(t, h)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.path == "/events" && c.want == 200 {
				t.Fatal("an /events stream does not end: not a case here")
			}
			if st, body := c.do(t, srv.URL); st != c.want {
				t.Errorf("status %d (%s), want %d", st, body, c.want)
			}
		})
	}
	// Nothing refused reached a tool: the three calls served are all the record holds,
	// and the world has the one write served only.
	var tools []string
	for _, c := range walltest.ReadRecord(t, path).Calls() {
		tools = append(tools, c.Tool)
	}
	if strings.Join(tools, " ") != "update_ticket read_email read_email" {
		t.Errorf("record has calls %v, want the update_ticket and the two read_email served", tools)
	}
	if st := h.State(); st["priority"] != "normal" || st["team"] != "payments" {
		t.Errorf("state %v: a refused write landed", st)
	}
}

// TestHTTPToken: a wall served beyond loopback needs a token, and then every request
// must carry it, whatever its Host.
func TestHTTPToken(t *testing.T) {
	h, _ := walltest.NewTrial(t, faults.CleanID)
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", ":0", "example.com:0", "10.1.2.3:0"} {
		if _, err := httpwall.ServeWith(h, httpwall.ServeConfig{Addr: addr}); !errors.Is(err, httpwall.ErrNotLoopback) {
			t.Errorf("ServeWith(%s) = %v, want it refused as not loopback", addr, err)
		}
	}
	if _, err := httpwall.ServeWith(h, httpwall.ServeConfig{Addr: "0.0.0.0:0", AllowRemote: true}); err == nil || !strings.Contains(err.Error(), "token") {
		t.Errorf("AllowRemote without a token = %v, want it refused for want of a token", err)
	}

	// Served on loopback here (tests stay off the network); the token is checked alike.
	const token = "s3cret-token-for-the-test"
	srv, err := httpwall.ServeWith(h, httpwall.ServeConfig{Addr: "127.0.0.1:0", AllowRemote: true, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	json := "application/json"
	cases := []wallRequest{
		{"no token", "POST", "/tools/read_email", "", map[string]string{"Content-Type": json}, `{}`, 401},
		{"wrong token", "POST", "/tools/read_email", "", map[string]string{"Content-Type": json, "Authorization": "Bearer nope"}, `{}`, 401},
		{"token not as bearer", "POST", "/tools/read_email", "", map[string]string{"Content-Type": json, "Authorization": token}, `{}`, 401},
		{"no token on /mcp", "POST", "/mcp", "", map[string]string{"Content-Type": json}, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, 401},
		{"no token on /events", "GET", "/events", "", nil, "", 401},
		{"no token on /healthz", "GET", "/healthz", "", nil, "", 401},
		{"token", "POST", "/tools/read_email", "", map[string]string{"Content-Type": json, "Authorization": "Bearer " + token}, `{}`, 200},
		{"token, the server's own name", "POST", "/tools/read_email", "wall.example.com", map[string]string{"Content-Type": json, "Authorization": "Bearer " + token}, `{}`, 200},
		{"token, text/plain", "POST", "/tools/read_email", "", map[string]string{"Content-Type": "text/plain", "Authorization": "Bearer " + token}, `{}`, 415},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if st, body := c.do(t, srv.URL); st != c.want {
				t.Errorf("status %d (%s), want %d", st, body, c.want)
			}
		})
	}
	if n := h.Stats().Calls; n != 2 {
		t.Errorf("%d calls reached the hub, want the 2 with the token", n)
	}
}
