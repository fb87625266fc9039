package proxies

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxMessageBytes is the largest JSON-RPC message the wall accepts.
const MaxMessageBytes = 4 << 20

// The SDK's stream transport ends the session on the first line it cannot decode. A
// wall must keep serving, so GuardedTransport sits in front of it:
//
//	stdin ──lines──> check ──good──> pipe ──> SDK connection ──> stdout
//	                   └──bad──> JSON-RPC error ───────────────────┘
//
// A line that is not JSON, not a JSON-RPC message, a batch, or longer than MaxBytes is
// answered with a JSON-RPC error (parse error, invalid request) and dropped.
type GuardedTransport struct {
	In  io.Reader
	Out io.Writer
	// MaxBytes bounds one message (MaxMessageBytes when zero).
	MaxBytes int
	// OnReject, if set, is told about every rejected line.
	OnReject func(reason string)
}

// Connect starts the guard and returns the SDK's connection over the checked stream.
func (t *GuardedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	max := t.MaxBytes
	if max <= 0 {
		max = MaxMessageBytes
	}
	out := &lockedWriter{w: t.Out}
	pr, pw := io.Pipe()
	go func() {
		err := guardLines(t.In, pw, out, max, t.OnReject)
		pw.CloseWithError(err)
	}()
	inner := &mcp.IOTransport{Reader: pr, Writer: nopWriteCloser{out}, MaxLineLength: -1}
	return inner.Connect(ctx)
}

func guardLines(in io.Reader, good io.Writer, out io.Writer, max int, onReject func(string)) error {
	br := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readLine(br, max)
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			var resp []byte
			var reason string
			if tooLong {
				reason = fmt.Sprintf("message too large: more than %d bytes", max)
				resp = errorResponse(nil, jsonrpc.CodeInvalidRequest, reason)
			} else {
				resp, reason = CheckMessage(line)
			}
			if resp != nil {
				if onReject != nil {
					onReject(reason)
				}
				if _, werr := out.Write(append(resp, '\n')); werr != nil {
					return werr
				}
			} else {
				// Trimmed: the SDK ends the session on any byte after a message but its newline.
				if _, werr := good.Write(append(bytes.TrimSpace(line), '\n')); werr != nil {
					return werr
				}
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// readLine reads one line; past max bytes it discards the rest of the line and says so.
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+2 {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, tooLong, err
	}
}

// CheckMessage returns a JSON-RPC error response for data that is not a JSON-RPC
// message (nil for a good one) and the reason in words.
func CheckMessage(data []byte) ([]byte, string) {
	data = bytes.TrimSpace(data)
	if !json.Valid(data) {
		return errorResponse(nil, jsonrpc.CodeParseError, "parse error: the message is not valid JSON"), "not valid JSON"
	}
	if len(data) > 0 && data[0] == '[' {
		// MCP dropped batches in 2025-06-18, and the SDK ends a session of that version
		// or later on the first one, so they are refused here.
		reason := "invalid request: JSON-RPC batches are not supported; send one message per line"
		return errorResponse(nil, jsonrpc.CodeInvalidRequest, reason), reason
	}
	if _, err := jsonrpc.DecodeMessage(data); err != nil {
		var probe struct {
			ID any `json:"id"`
		}
		_ = json.Unmarshal(data, &probe)
		reason := "invalid request: not a JSON-RPC 2.0 message: " + err.Error()
		return errorResponse(probe.ID, jsonrpc.CodeInvalidRequest, reason), reason
	}
	return nil, ""
}

func errorResponse(id any, code int64, msg string) []byte {
	if rid, err := jsonrpc.MakeID(id); err == nil && rid.IsValid() {
		if b, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: rid, Error: &jsonrpc.Error{Code: code, Message: msg}}); err == nil {
			return b
		}
	}
	// No id to echo: JSON-RPC 2.0 wants "id": null, which the SDK's encoder leaves out
	// (and clients then cannot read the response).
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": msg}})
	return b
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
