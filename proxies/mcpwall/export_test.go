package mcpwall

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// GuardLines lets FuzzGuard (package mcpwall_test, which shares the guard's test messages
// with the tests of every transport) drive the guard's line loop directly.
var GuardLines = guardLines

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
