package mcpwall

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	sjson "github.com/segmentio/encoding/json"
)

// guardConn is the guard as the SDK's connection: each line is read once, on the SDK's
// own reading goroutine, checked, decoded once and handed over as a jsonrpc.Message.
//
//	stream ──line──> check + decode (+ alias an id) ──Message──> SDK ──Message──> encode (+ restore) ──> stream
//	                   └──bad──> JSON-RPC error ──────────────────────────────────────────────────────────┘
//
// In place of a reader goroutine, an io.Pipe and the SDK's own line reader (three
// goroutine hand-offs and three decodes a message). The SDK wants Close to end a Read
// that waits for input: a stream with read deadlines (a socket, a pipe the runtime
// polls) is read directly and a past deadline ends the wait; any other reader gets one
// goroutine of its own that reads ahead a message at a time.
type guardConn struct {
	br       *bufio.Reader
	max      int
	onReject func(string)
	ids      *idTable

	// deadline is the stream's SetReadDeadline, nil when it has none.
	deadline func(time.Time) error
	// ahead carries the reader goroutine's messages when there is no deadline.
	ahead chan msgOrErr
	// next is an error met after the last message: returned by the next read.
	next error
	// line is the last good message as it was read; inFlight: it is a request whose id
	// a request read before it, not yet answered, has (the SDK refuses it).
	line     []byte
	inFlight bool

	wmu sync.Mutex
	out io.Writer
	// try writes once without waiting for the stream to take it (n < len(p) and an
	// error that is errWouldBlock when it is full); nil when out cannot be tried so.
	try func(p []byte) (int, error)

	closeOnce sync.Once
	closed    chan struct{}
	onClose   func()

	// fast hands plain tool calls to the server's handler (fastcall.go); nil: the SDK's
	// connection dispatches all. served, when not nil, is closed once fast is set (or
	// will not be): Read waits for it, so that no call is read before.
	fast   atomic.Pointer[fastCalls]
	served chan struct{}
	// ctx ends with Close: the fast calls' context.
	ctx    context.Context
	cancel context.CancelFunc
}

type msgOrErr struct {
	msg jsonrpc.Message
	err error
}

type readDeadliner interface{ SetReadDeadline(time.Time) error }

func newGuardConn(in io.Reader, out io.Writer, max int, onReject func(string)) *guardConn {
	c := &guardConn{
		br:       bufio.NewReaderSize(in, 64<<10),
		max:      max,
		onReject: onReject,
		ids:      newIDTable(),
		out:      out,
		closed:   make(chan struct{}),
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	in, closeIn := pollable(in)
	if closeIn != nil {
		c.br.Reset(in)
	}
	var closeOut func()
	c.out, c.try, closeOut = tryable(out)
	if closeIn != nil || closeOut != nil {
		c.onClose = func() {
			if closeIn != nil {
				closeIn()
			}
			if closeOut != nil {
				closeOut()
			}
		}
	}
	if d, ok := in.(readDeadliner); ok && d.SetReadDeadline(time.Time{}) == nil {
		c.deadline = d.SetReadDeadline
		return c
	}
	c.ahead = make(chan msgOrErr)
	go func() {
		for {
			msg, err := c.readMessage()
			select {
			case c.ahead <- msgOrErr{msg, err}:
			case <-c.closed:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return c
}

// Read returns the next good message. At the end of input it first waits until every
// request read before it has been answered: the SDK cancels its requests in flight and
// refuses to write once its reader has ended, so a client that writes its requests and
// closes its end (what a piped script does, and legal for newline-delimited JSON-RPC)
// would lose the answers and the wall their calls.
func (c *guardConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if c.served != nil {
		select {
		case <-c.served:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, io.EOF
		}
	}
	for {
		msg, err := c.read(ctx)
		if err != nil || !c.take(msg) {
			return msg, err
		}
	}
}

// read returns the next good message, as Read does, the guard's own calls included.
func (c *guardConn) read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	default:
	}
	var msg jsonrpc.Message
	var err error
	if c.ahead == nil {
		msg, err = c.readMessage()
		select {
		case <-c.closed:
			// A past deadline (Close) ended the read.
			return nil, io.EOF
		default:
		}
	} else {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, io.EOF
		case v := <-c.ahead:
			msg, err = v.msg, v.err
		}
	}
	if err != nil {
		select {
		case <-c.ids.waitDrained():
		case <-ctx.Done():
		case <-c.closed:
		}
		return nil, err
	}
	c.inFlight = false
	if req, ok := msg.(*jsonrpc.Request); ok {
		if req.IsCall() {
			c.inFlight = c.ids.read(req.ID)
		} else if req.Method == "notifications/cancelled" {
			// A cancelled request may go unanswered (MCP says it should).
			if id, ok := cancelledID(req.Params); ok {
				c.ids.answered(id)
			}
		}
	}
	return msg, nil
}

// readMessage reads lines until one holds a good message, answering each bad one.
func (c *guardConn) readMessage() (jsonrpc.Message, error) {
	for {
		if c.next != nil {
			return nil, c.next
		}
		line, tooLong, err := readLine(c.br, c.max)
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.EOF
			}
			c.next = err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 && !tooLong {
			continue
		}
		var resp []byte
		var reason string
		var msg jsonrpc.Message
		if tooLong {
			// line holds the message's first bytes, where a client puts its id.
			reason = fmt.Sprintf("message too large: more than %d bytes", c.max)
			resp = errorResponse(leadingID(line), jsonrpc.CodeInvalidRequest, reason)
		} else {
			msg, resp, reason = decodeLine(line)
		}
		if resp != nil {
			if c.onReject != nil {
				c.onReject(reason)
			}
			if werr := c.write(append(resp, '\n')); werr != nil {
				return nil, werr
			}
			continue
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			c.ids.aliasRequest(req, line)
		}
		c.line = line
		return msg, nil
	}
}

// decodeLine decodes one message, or returns the JSON-RPC error that answers it and the
// reason in words: not JSON (-32700), a batch or not JSON-RPC (-32600, with the id when
// there is one).
func decodeLine(data []byte) (jsonrpc.Message, []byte, string) {
	data = bytes.TrimSpace(data)
	// Valid also refuses bytes after the message, which the SDK's decoder would leave.
	if !json.Valid(data) {
		return nil, errorResponse(nil, jsonrpc.CodeParseError, "parse error: the message is not valid JSON"), "not valid JSON"
	}
	if len(data) > 0 && data[0] == '[' {
		// MCP dropped batches in 2025-06-18, and the SDK ends a session of that version
		// or later on the first one, so they are refused here.
		reason := "invalid request: JSON-RPC batches are not supported; send one message per line"
		return nil, errorResponse(nil, jsonrpc.CodeInvalidRequest, reason), reason
	}
	msg, err := decodeMessage(data)
	if err != nil {
		reason := "invalid request: not a JSON-RPC 2.0 message: " + err.Error()
		return nil, errorResponse(leadingID(data), jsonrpc.CodeInvalidRequest, reason), reason
	}
	return msg, nil, ""
}

// decodeMessage is jsonrpc.DecodeMessage for a message already known to be valid JSON,
// with the same rules (case-sensitive members, a depth of at most 1000, "jsonrpc":"2.0",
// an id that is a string, a number or null, a response's id required), without the
// 32 KiB buffer the SDK's decoder makes and zeroes for every message.
func decodeMessage(data []byte) (jsonrpc.Message, error) {
	if err := checkDepth(data, 1000); err != nil {
		return nil, err
	}
	var w struct {
		VersionTag string          `json:"jsonrpc"`
		ID         any             `json:"id,omitempty"`
		Method     json.RawMessage `json:"method"`
		Params     json.RawMessage `json:"params,omitempty"`
		Result     json.RawMessage `json:"result,omitempty"`
		Error      *jsonrpc.Error  `json:"error,omitempty"`
	}
	if _, err := sjson.Parse(data, &w, sjson.DontMatchCaseInsensitiveStructFields); err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	if w.VersionTag != "2.0" {
		return nil, fmt.Errorf("invalid message version tag %q; expected %q", w.VersionTag, "2.0")
	}
	id, err := jsonrpc.MakeID(w.ID)
	if err != nil {
		return nil, err
	}
	if len(w.Method) > 0 {
		var method string
		if _, err := sjson.Parse(w.Method, &method, sjson.DontMatchCaseInsensitiveStructFields); err != nil {
			return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
		return &jsonrpc.Request{Method: method, ID: id, Params: w.Params}, nil
	}
	if !id.IsValid() {
		return nil, errors.New("JSON RPC invalid request")
	}
	resp := &jsonrpc.Response{ID: id, Result: w.Result}
	if w.Error != nil {
		resp.Error = w.Error
	}
	return resp, nil
}

// checkDepth refuses JSON nested deeper than max, as the SDK's decoder does.
func checkDepth(data []byte, max int) error {
	depth, inString, escaped := 0, false, false
	for _, b := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
			continue
		}
		switch b {
		case '"':
			inString = true
		case '{', '[':
			if depth++; depth > max {
				return fmt.Errorf("json: exceeded maximum nesting depth of %d", max)
			}
		case '}', ']':
			depth--
		}
	}
	return nil
}

// Write encodes msg as one line, with an aliased id put back as the client wrote it.
func (c *guardConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	default:
	}
	data, err := jsonrpc.EncodeMessage(msg)
	resp, isResp := msg.(*jsonrpc.Response)
	if err == nil {
		if isResp {
			data = c.ids.restoreID(resp.ID, data)
		}
		err = c.write(append(data, '\n'))
	}
	if isResp {
		c.ids.answered(resp.ID)
	}
	return err
}

func (c *guardConn) write(p []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.out.Write(p)
	return err
}

// answerNow writes the answer to a call the guard took, from the reading goroutine,
// without ever waiting on the client: a client may write many requests before it reads
// an answer, and a reader blocked on a full stdout would no longer read them (both
// pipes full: a deadlock the SDK's goroutine a request never meets). The line is
// written at once when the stream takes it whole (the common case, no goroutine, no
// hand-off); what the stream does not take, or a line behind another writer, is written
// by a goroutine of its own, as every SDK answer is.
func (c *guardConn) answerNow(resp *jsonrpc.Response) {
	data, err := jsonrpc.EncodeMessage(resp)
	if err != nil || c.try == nil {
		go c.Write(c.ctx, resp)
		return
	}
	data = append(c.ids.restoreID(resp.ID, data), '\n')
	if c.ctx.Err() == nil && c.wmu.TryLock() {
		n, err := c.try(data)
		if n == len(data) || err != nil && !errors.Is(err, errWouldBlock) {
			// Whole, or a broken stream (as for an SDK answer, the session's end says so).
			c.wmu.Unlock()
			c.ids.answered(resp.ID)
			return
		}
		// The rest goes on before any other line: the lock passes to the goroutine.
		rest := data[n:]
		go func() {
			c.out.Write(rest)
			c.wmu.Unlock()
			c.ids.answered(resp.ID)
		}()
		return
	}
	go func() {
		if c.ctx.Err() == nil {
			c.write(data)
		}
		c.ids.answered(resp.ID)
	}()
}

// Close ends a Read waiting for input. It leaves the stream open: its owner closes it.
func (c *guardConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.cancel()
		if c.deadline != nil {
			c.deadline(time.Unix(1, 0))
		}
		if c.onClose != nil {
			c.onClose()
		}
	})
	return nil
}

func (c *guardConn) SessionID() string { return "" }

var _ mcp.Connection = (*guardConn)(nil)

// exactInt reports whether id is an integer the SDK echoes byte for byte: below 2^53,
// with no sign on a zero, no leading zero, exponent or fraction.
func exactInt(id []byte) bool {
	if len(id) == 1 && id[0] == '0' {
		return true
	}
	if len(id) > 0 && id[0] == '-' {
		id = id[1:]
	}
	if len(id) == 0 || len(id) > 15 || id[0] < '1' || id[0] > '9' {
		return false
	}
	for _, b := range id {
		if b < '0' || b > '9' {
			return false
		}
	}
	return true
}

// topLevelID finds the value of the first top-level "id" member of msg, a JSON object:
// msg[start:end] are its bytes. It scans no further than that member, without a
// decoder, so it also reads the id from the first bytes of a message cut off after it
// (leadingID). The one id scanner of both transports.
func topLevelID(msg []byte) (start, end int, ok bool) {
	members(msg, func(key []byte, vs, ve int) bool {
		if isIDKey(key) {
			start, end, ok = vs, ve, true
			return false
		}
		return true
	})
	return start, end, ok
}

// members calls each with every top-level member of the JSON object msg in turn (its
// key as written, quotes included, and its value's bounds in msg) until each returns
// false, and reports whether it read the object to its end.
func members(msg []byte, each func(key []byte, start, end int) bool) bool {
	i := skipSpace(msg, 0)
	if i >= len(msg) || msg[i] != '{' {
		return false
	}
	i = skipSpace(msg, i+1)
	if i < len(msg) && msg[i] == '}' {
		return true
	}
	for {
		i = skipSpace(msg, i)
		if i >= len(msg) || msg[i] != '"' {
			return false
		}
		ks := i
		if i = skipJSONString(msg, i); i < 0 {
			return false
		}
		key := msg[ks:i]
		if i = skipSpace(msg, i); i >= len(msg) || msg[i] != ':' {
			return false
		}
		vs := skipSpace(msg, i+1)
		if i = skipJSONValue(msg, vs); i < 0 {
			return false
		}
		if !each(key, vs, i) {
			return false
		}
		if i = skipSpace(msg, i); i < len(msg) && msg[i] == '}' {
			return true
		}
		if i >= len(msg) || msg[i] != ',' {
			return false
		}
		i++
	}
}

func isIDKey(key []byte) bool {
	if string(key) == `"id"` {
		return true
	}
	if bytes.IndexByte(key, '\\') < 0 {
		return false
	}
	var s string
	return json.Unmarshal(key, &s) == nil && s == "id"
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipJSONString returns the index after the string starting at b[i] (a quote), or -1.
func skipJSONString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// skipJSONValue returns the index after the value starting at b[i], or -1.
func skipJSONValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipJSONString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				if i = skipJSONString(b, i); i < 0 {
					return -1
				}
				i--
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	default:
		for ; i < len(b); i++ {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
		}
		return i
	}
}

// errWouldBlock is a try's error when the stream takes no more for now.
var errWouldBlock = errors.New("the stream is full")

// tryable returns out as the guard writes it, a function that writes to it once without
// waiting (nil when there is none) and one that gives it back as it was (nil when
// nothing was changed). A stream the runtime polls (a socket, a pipe it opened) is tried
// as it is; a process's stdout that is a pipe or a socket, handed over in blocking mode,
// is written through a non-blocking copy (makeTryable); anything else (a terminal, a
// file, an io.Pipe) is not tried.
func tryable(out io.Writer) (io.Writer, func([]byte) (int, error), func()) {
	f, isFile := out.(*os.File)
	if isFile && f.SetWriteDeadline(time.Time{}) != nil {
		fi, err := f.Stat()
		if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
			return out, nil, nil
		}
		p, closeP := makeTryable(f)
		if p == nil {
			return out, nil, nil
		}
		return p, tryWrite(p), closeP
	}
	if sc, ok := out.(syscall.Conn); ok && (isFile || isPolled(out)) {
		return out, tryWrite(sc), nil
	}
	return out, nil, nil
}

// isPolled says whether out is a stream the runtime polls: a write deadline takes.
func isPolled(out io.Writer) bool {
	d, ok := out.(interface{ SetWriteDeadline(time.Time) error })
	return ok && d.SetWriteDeadline(time.Time{}) == nil
}

// pollable returns a stream whose reads a deadline can end, for a process's stdin that
// is a pipe or a socket the runtime does not poll (a child's stdin is handed over in
// blocking mode), and a function that gives it back as it was; else in and nil.
func pollable(in io.Reader) (io.Reader, func()) {
	f, ok := in.(*os.File)
	if !ok || f.SetReadDeadline(time.Time{}) == nil {
		return in, nil
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return in, nil
	}
	return makePollable(f)
}
