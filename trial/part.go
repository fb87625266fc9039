package trial

import (
	"errors"
	"slices"
)

// A trial's parts, as StartHub sets them up and stop closes them:
//
//	set up:  server -> relay's stream -> script shim -> browser guard        (Live.parts)
//	stop:    the parts that write into the record -> the hub's session end -> the others, last set up first
//
// The model proxy is served on the trial's server, the real servers (and a script's
// adapters) are the hub's tool source, which the hub closes, and the agent's container
// goes in Teardown, whatever worker set it up.

// Part is one thing a trial adds around its agent and its hub: set up with the trial,
// closed when the trial stops.
type Part interface {
	Close() error
}

// recordsOnClose is a part whose close writes into the record (the shim's last look at
// the original project): it closes before the hub writes the session end.
type recordsOnClose interface {
	Part
	recordsOnClose()
}

// stop closes the trial's parts and its hub (writing the record's session end), in the
// order drawn above, and returns every failure, the hub's first.
func (lt *Live) stop(reason string) error {
	var before, after []error
	for _, p := range slices.Backward(lt.parts) {
		if _, ok := p.(recordsOnClose); ok {
			before = append(before, p.Close())
		}
	}
	err := lt.hub.Close(reason)
	lt.unsubscribe()
	for _, p := range slices.Backward(lt.parts) {
		if _, ok := p.(recordsOnClose); !ok {
			after = append(after, p.Close())
		}
	}
	return errors.Join(append(append([]error{err}, before...), after...)...)
}

// add keeps p among the trial's parts, to be closed when it stops.
func (lt *Live) add(p Part) {
	lt.parts = append(lt.parts, p)
}
