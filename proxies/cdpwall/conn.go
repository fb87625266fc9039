package cdpwall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/coder/websocket"
)

// maxMessage bounds one CDP message (a full-page screenshot is tens of MB).
const maxMessage = 256 << 20

// message is one CDP message, either way: a command (ID, Method), its answer (ID, Result
// or Error) or an event (Method, no ID). SessionID names the flattened session.
type message struct {
	ID        int64           `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *cdpError       `json:"error,omitempty"`
}

type cdpError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

func (e *cdpError) Error() string { return fmt.Sprintf("%s (%d)", e.Message, e.Code) }

// conn is the guard's own connection to the browser: commands with ids it owns, and the
// events handed to one function in the order they arrive.
type conn struct {
	ws *websocket.Conn

	mu      sync.Mutex
	nextID  int64
	waiting map[int64]chan message
	err     error // set once the connection is gone
	done    chan struct{}
}

func dialConn(ctx context.Context, url string) (*conn, error) {
	ws, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		return nil, err
	}
	ws.SetReadLimit(maxMessage)
	return &conn{ws: ws, waiting: map[int64]chan message{}, done: make(chan struct{})}, nil
}

// run reads until the connection ends, handing each event to onEvent (on this goroutine:
// onEvent must not wait for an answer; it starts a goroutine for that), and returns why
// it ended.
func (c *conn) run(ctx context.Context, onEvent func(message)) error {
	for {
		_, data, err := c.ws.Read(ctx)
		if err != nil {
			c.fail(err)
			return err
		}
		var m message
		if json.Unmarshal(data, &m) != nil {
			continue
		}
		debugf("<- %.300s", data)
		if m.ID != 0 {
			c.mu.Lock()
			ch := c.waiting[m.ID]
			delete(c.waiting, m.ID)
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
			continue
		}
		onEvent(m)
	}
}

func (c *conn) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err = err
	close(c.done)
	for id, ch := range c.waiting {
		close(ch)
		delete(c.waiting, id)
	}
}

// debugf logs the guard's own traffic in tests.
var debugf = func(string, ...any) {}

var errGone = errors.New("the connection to the browser is gone")

// call sends a command on a session ("" for the browser) and waits for its answer.
func (c *conn) call(ctx context.Context, session, method string, params any, result any) error {
	raw, err := json.Marshal(params)
	if err != nil {
		return err
	}
	ch := make(chan message, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return errGone
	}
	c.nextID++
	id := c.nextID
	c.waiting[id] = ch
	c.mu.Unlock()
	b, _ := json.Marshal(message{ID: id, Method: method, Params: raw, SessionID: session})
	debugf("-> %.300s", b)
	if err := c.ws.Write(ctx, websocket.MessageText, b); err != nil {
		c.fail(err)
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return fmt.Errorf("%s: %w", method, errGone)
		}
		if m.Error != nil {
			return fmt.Errorf("%s: %w", method, m.Error)
		}
		if result != nil && len(m.Result) > 0 {
			return json.Unmarshal(m.Result, result)
		}
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.waiting, id)
		c.mu.Unlock()
		return ctx.Err()
	}
}

func (c *conn) close() {
	c.ws.Close(websocket.StatusNormalClosure, "")
	c.fail(errGone)
}
