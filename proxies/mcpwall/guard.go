package mcpwall

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxMessageBytes is the largest JSON-RPC message the wall accepts.
const MaxMessageBytes = 4 << 20

// The SDK's stream transport ends the session on the first line it cannot decode. A
// wall must keep serving, so GuardedTransport sits in front of it:
//
//	stdin ──lines──> check + decode ──good──> SDK ──> stdout
//	                   └──bad──> JSON-RPC error ────────────┘
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
	// fast: served by a wall server's Run, the guard hands it plain tool calls
	// (fastcall.go); conn is the connection it made.
	fast bool
	conn *guardConn
}

// Connect returns the guard as the SDK's connection over In and Out (guardConn).
func (t *GuardedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	max := t.MaxBytes
	if max <= 0 {
		max = MaxMessageBytes
	}
	c := newGuardConn(t.In, t.Out, max, t.OnReject)
	if t.fast {
		c.served = make(chan struct{})
	}
	t.conn = c
	return c, nil
}

// serve tells the guard the session the SDK made of its connection to srv (nil: none):
// its plain calls go to srv's handler from now on.
func (t *GuardedTransport) serve(srv *Server, ss *mcp.ServerSession) {
	c := t.conn
	if c == nil || c.served == nil {
		return
	}
	if ss != nil {
		c.fast.Store(&fastCalls{call: srv.methodHandler(), sess: ss, inline: srv.inMemory(), cancels: map[jsonrpc.ID]context.CancelFunc{}})
	}
	close(c.served)
}

// headBytes is how much of an oversized message is kept to find its id in.
const headBytes = 4 << 10

// readLine reads one line; past max bytes it discards the rest of the line and says so,
// keeping its first headBytes (or max, if less) in line.
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+2 {
				tooLong = true
				keep := min(headBytes, max)
				if len(line) < keep {
					line = append(line, chunk[:min(len(chunk), keep-len(line))]...)
				}
				line = line[:min(len(line), keep)]
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
	_, resp, reason := decodeLine(data)
	return resp, reason
}

// errorResponse is a JSON-RPC error answering the request whose id is id, as the
// client wrote it (the bytes, so that 2^70 or 1.50 come back as sent). An id that is
// not a string or a number, or none, is answered with "id": null as JSON-RPC 2.0 wants
// (the SDK's encoder would leave the member out, and clients then cannot read it).
func errorResponse(id json.RawMessage, code int64, msg string) []byte {
	type rpcError struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}{"2.0", validID(id), rpcError{code, msg}})
	return b
}

// validID is id if it is a JSON string or number, else null.
func validID(id json.RawMessage) json.RawMessage {
	id = bytes.TrimSpace(id)
	if len(id) > 0 && json.Valid(id) && (id[0] == '"' || id[0] == '-' || id[0] >= '0' && id[0] <= '9') {
		return id
	}
	return json.RawMessage("null")
}

// leadingID reads the id of a message from its first bytes (the rest may be cut off):
// the value of the top-level "id" member if it comes before the cut, else nil.
func leadingID(head []byte) json.RawMessage {
	start, end, ok := topLevelID(head)
	if !ok {
		return nil
	}
	return head[start:end]
}

// The SDK holds a request id as an int64 or a string, and reads a JSON number through a
// float64: 2^70, 2^53+1, 1.5, 1e3 or -0 would come back as another number, and the
// client could not match the answer to its request (a string with escapes would come
// back the same string in other bytes). The guard hands the SDK such an id
// as a string alias and puts the client's own bytes back into the answer:
//
//	stdin ──{"id":1180591620717411303424}──> alias ──{"id":"\u0000chaos-id:1"}──> SDK
//	stdout <──{"id":1180591620717411303424}── restore <──{"id":"\u0000chaos-id:1"}──┘
//
// The same table counts the requests the SDK has read and not yet answered, so that
// the end of input waits for their answers (drainConn).
type idTable struct {
	mu      sync.Mutex
	aliases map[string]json.RawMessage // alias -> the id as the client wrote it
	next    int
	pending map[jsonrpc.ID]bool // requests read and not yet answered
	drained chan struct{}       // closed when pending empties, while the end of input waits
}

func newIDTable() *idTable {
	return &idTable{aliases: map[string]json.RawMessage{}, pending: map[jsonrpc.ID]bool{}}
}

// aliasPrefix starts every alias the guard hands the SDK: a NUL, which no id a client
// sends as JSON text carries unescaped in this form.
const aliasPrefix = "\x00chaos-id:"

// alias gives the request msg (one JSON object, as the client wrote it) an alias for its
// id when the SDK would not echo that id byte for byte: msg[start:end] is the id and
// name its alias, "" when it needs none. Both transports call it: the stream guard
// hands the SDK a request with the alias as its id (aliasRequest), /mcp a body with the
// alias's JSON in place of the id (GuardHTTP).
func (t *idTable) alias(msg []byte) (name string, start, end int) {
	start, end, ok := topLevelID(msg)
	if !ok {
		return "", 0, 0
	}
	id := msg[start:end]
	if echoedAsSent(id) {
		return "", 0, 0
	}
	t.mu.Lock()
	t.next++
	name = aliasPrefix + strconv.Itoa(t.next)
	t.aliases[name] = append(json.RawMessage(nil), id...)
	t.mu.Unlock()
	return name, start, end
}

// echoedAsSent says whether the SDK writes id back byte for byte: null, an integer it
// holds exactly, a string without escapes.
func echoedAsSent(id []byte) bool {
	return len(id) == 0 || id[0] == 'n' || exactInt(id) || id[0] == '"' && bytes.IndexByte(id, '\\') < 0
}

// aliasRequest gives req, read from line, its alias as its id (see alias).
func (t *idTable) aliasRequest(req *jsonrpc.Request, line []byte) {
	if name, _, _ := t.alias(line); name != "" {
		id, _ := jsonrpc.MakeID(name)
		req.ID = id
	}
}

// restore returns data, an encoded answer (or a part of an event stream) to the request
// aliased as name, with the client's own id in place of the alias's JSON: the first n
// of them (n < 0: all). forget drops the alias: its answer is complete.
func (t *idTable) restore(name string, data []byte, n int, forget bool) []byte {
	if len(name) < len(aliasPrefix) || name[:len(aliasPrefix)] != aliasPrefix {
		return data
	}
	t.mu.Lock()
	raw, ok := t.aliases[name]
	if forget {
		delete(t.aliases, name)
	}
	t.mu.Unlock()
	if !ok {
		return data
	}
	quoted, _ := json.Marshal(name)
	return bytes.Replace(data, quoted, raw, n)
}

// restoreID returns data, the encoded answer to request id, with the client's own id in
// place of an alias. The id is encoded before the result or error, so the first match
// is it.
func (t *idTable) restoreID(id jsonrpc.ID, data []byte) []byte {
	name, _ := id.Raw().(string)
	return t.restore(name, data, 1, true)
}

// read notes a request the SDK has read: it owes the client an answer. It reports
// whether a request with that id was in flight already: the SDK refuses the second at
// once, with no answer (its error goes to a request with no id), and runs nothing.
func (t *idTable) read(id jsonrpc.ID) (inFlight bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	inFlight = t.pending[id]
	t.pending[id] = true
	return inFlight
}

// answered notes an answer (or a cancellation) of request id.
func (t *idTable) answered(id jsonrpc.ID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.pending, id)
	if len(t.pending) == 0 && t.drained != nil {
		close(t.drained)
		t.drained = nil
	}
}

// waitDrained returns a channel closed once every request read has been answered.
func (t *idTable) waitDrained() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	ch := make(chan struct{})
	if len(t.pending) == 0 {
		close(ch)
	} else {
		t.drained = ch
	}
	return ch
}
