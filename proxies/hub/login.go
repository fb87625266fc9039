package hub

import (
	"github.com/crashwall/chaos/faults"
)

// The operator's login (spec operator:, trial/operator.go): a fault that ends the
// session (faults.EndsSession: session_drop) and has fired ended the trial's session; a
// login revives it, and the fault fires no more in the trial. A login while the session
// is alive changes nothing.

// LoginResult is what a login did.
type LoginResult string

// What a login can do.
const (
	LoginRevived    LoginResult = "the dropped session was revived: session_drop fires no more in this trial"
	LoginNotDropped LoginResult = "the session was not dropped: nothing to revive"
)

// Login is the operator logging in again on the twin.
func (h *Hub) Login() LoginResult {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.dropped || h.revived {
		return LoginNotDropped
	}
	h.revived = true
	return LoginRevived
}

// SessionDropped says whether a fault that ends the session has fired and no login has
// revived the session since.
func (h *Hub) SessionDropped() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.dropped && !h.revived
}

// fires decides whether the armed fault fires on the call at pos (faults.Decide), but
// never a fault that ends the session after a login revived it; it notes such a fault
// that fired. h.mu is held.
func (h *Hub) fires(pos faults.Position) bool {
	ends := faults.EndsTheSession(h.cond.Family)
	if h.revived && ends {
		return false
	}
	fired := faults.Decide(h.seed, h.cond, pos)
	if fired && ends {
		h.dropped = true
	}
	return fired
}
