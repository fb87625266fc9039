package record

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/crashwall/chaos/redact"
)

// Writer appends rows to a record file, one write per row, so a row is on disk as
// soon as Write returns (no user-space buffering) and a crash loses at most the row
// being written. It is safe for concurrent use. Close writes the session_end row once.
type Writer struct {
	mu     sync.Mutex
	f      *os.File
	path   string
	seq    int
	closed bool
	now    func() time.Time
	// OnRow, if set, is called with every row after it is written (the hub's event stream).
	onRow func(Row)
}

// Open creates (or truncates) the record at path, making its directory.
func Open(path string) (*Writer, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("create record folder: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open record: %w", err)
	}
	return &Writer{f: f, path: path, now: time.Now}, nil
}

// Discard returns a writer that keeps nothing (rows still reach OnRow).
func Discard() *Writer { return &Writer{now: time.Now} }

// Path is the file the record is written to ("" for Discard).
func (w *Writer) Path() string { return w.path }

// OnRow sets a function called with each row after it is written.
func (w *Writer) OnRow(fn func(Row)) {
	w.mu.Lock()
	w.onRow = fn
	w.mu.Unlock()
}

// ErrClosed is returned by Write after the session end was written.
var ErrClosed = errors.New("record is closed")

// Write numbers the row, stamps its time and appends it.
func (w *Writer) Write(r Row) (Row, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return r, ErrClosed
	}
	return w.writeLocked(r)
}

func (w *Writer) writeLocked(r Row) (Row, error) {
	w.seq++
	r.Seq = w.seq
	if r.Time.IsZero() {
		r.Time = w.now().UTC()
	}
	if w.f != nil {
		b, err := json.Marshal(r)
		if err != nil {
			return r, fmt.Errorf("encode record row: %w", err)
		}
		// Every secret value known is redacted: an agent may pass one as an argument, a
		// tool may repeat one in its reply, and the final state may hold one.
		if _, err := w.f.Write(append(redact.Known.Bytes(b), '\n')); err != nil {
			return r, fmt.Errorf("write record: %w", err)
		}
	}
	if w.onRow != nil {
		w.onRow(r)
	}
	return r, nil
}

// Close writes the session_end row (end.Type is set for you) and closes the file.
// Only the first Close writes; later ones return nil. It is safe to call from a
// signal handler goroutine while calls are being written.
func (w *Writer) Close(end Row) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	end.Type = TypeSessionEnd
	_, err := w.writeLocked(end)
	if w.f != nil {
		if serr := w.f.Sync(); err == nil {
			err = serr
		}
		if cerr := w.f.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// Closed reports whether the session end has been written.
func (w *Writer) Closed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.closed
}
