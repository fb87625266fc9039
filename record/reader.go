package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// Log is a record read back.
type Log struct {
	Rows []Row
	// Start and End are the session_start and session_end rows, nil when missing.
	Start *Row
	End   *Row
}

// Calls returns the call rows in order.
func (l *Log) Calls() []Row {
	var out []Row
	for _, r := range l.Rows {
		if r.Type == TypeCall {
			out = append(out, r)
		}
	}
	return out
}

// Fired returns the call rows on which the fault fired.
func (l *Log) Fired() []Row {
	var out []Row
	for _, r := range l.Rows {
		if r.Type == TypeCall && r.Hit != nil && r.Hit.Fired {
			out = append(out, r)
		}
	}
	return out
}

// Complete reports whether the record was closed with a session end.
func (l *Log) Complete() bool { return l.End != nil }

// CorruptError says where a record stopped making sense. The rows before it are kept.
type CorruptError struct {
	Path string
	Line int
	Err  error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("%s:%d: corrupt record row: %v", e.Path, e.Line, e.Err)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// ReadFile reads the record at path. On a corrupt row it returns the rows before it
// together with a *CorruptError, so a caller can say what was lost.
func ReadFile(path string) (*Log, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open record: %w", err)
	}
	defer f.Close()
	l, err := Read(f)
	if ce, ok := err.(*CorruptError); ok {
		ce.Path = path
	}
	return l, err
}

// Read reads a record from r.
func Read(r io.Reader) (*Log, error) {
	l := &Log{}
	br := bufio.NewReader(r)
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(b)) > 0 {
			var row Row
			if jerr := json.Unmarshal(b, &row); jerr != nil {
				l.index()
				return l, &CorruptError{Path: "record", Line: line, Err: jerr}
			}
			if row.Type == "" {
				l.index()
				return l, &CorruptError{Path: "record", Line: line, Err: fmt.Errorf("row has no type")}
			}
			l.Rows = append(l.Rows, row)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			l.index()
			return l, fmt.Errorf("read record: %w", err)
		}
	}
	l.index()
	return l, nil
}

// index points Start and End at their rows.
func (l *Log) index() {
	l.Start, l.End = nil, nil
	for i := range l.Rows {
		switch l.Rows[i].Type {
		case TypeSessionStart:
			if l.Start == nil {
				l.Start = &l.Rows[i]
			}
		case TypeSessionEnd:
			l.End = &l.Rows[i]
		}
	}
}
