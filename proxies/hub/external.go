package hub

import (
	"errors"

	"github.com/crashwall/chaos/record"
)

// Record writes a row that a wall made on its own, for exchanges that do not go through
// Call: the browser wall's requests, denials, targets and navigations (transport "cdp").
// A call row counts as a call, and as a fired fault when its Hit fired, so session_end,
// Stats and the verdict see the wall's faults as they see the tools'.
func (h *Hub) Record(row record.Row) error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return ErrClosed
	}
	// A refused request (a browser write the guard denied) counts as a call, as
	// limits.max_calls counts it (activities/watch.go).
	if row.Type == record.TypeCall || row.Type == record.TypeRejected {
		h.total++
	}
	if row.Type == record.TypeCall && row.Hit != nil && row.Hit.Fired {
		h.fired++
	}
	h.mu.Unlock()
	if _, err := h.rec.Write(row); err != nil && !errors.Is(err, record.ErrClosed) {
		return err
	}
	return nil
}
