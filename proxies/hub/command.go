package hub

import (
	"context"
	"encoding/json"

	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/world"
)

// Command is what a command run through a wall (proxies/shim) gives back to the agent.
type Command struct {
	Exit           int
	Stdout, Stderr string
	// Refused, when set, makes the call's row a rejected one with this reason: the wall
	// could not answer it (a script's adapter failed).
	Refused string
}

// CallCommand is Call for a command the agent ran (a shimmed script): render turns the
// tool's reply into the command's exit code and output, which the call's row records
// with the command line argv. A refused call returns the *CallError as Call does.
func (h *Hub) CallCommand(ctx context.Context, transport, name string, argv []string, rawArgs json.RawMessage, render func(world.Reply) Command) (world.Reply, Command, error) {
	var out Command
	reply, err := h.call(ctx, transport, name, rawArgs, func(r world.Reply, row *record.Row) {
		out = render(r)
		shapeRow(row, argv, out)
	})
	if err != nil {
		return reply, Command{}, err
	}
	return reply, out, nil
}

// RefuseCommand records a command the wall refused to run (a shimmed launcher called for
// no known script), with what the agent got back.
func (h *Hub) RefuseCommand(transport, launcher string, argv []string, reason string, out Command) error {
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	if closed {
		return ErrClosed
	}
	row := record.Row{Type: record.TypeRejected, Transport: transport, Tool: launcher, Reason: reason}
	shapeRow(&row, argv, out)
	_, err := h.rec.Write(row)
	return err
}

// RecordOutside records a change the agent made outside its sandbox (a write to the
// original project), as damage the world's state does not show.
func (h *Hub) RecordOutside(transport, reason string) {
	h.rec.Write(record.Row{Type: record.TypeOutside, Transport: transport, Reason: reason})
}

func shapeRow(row *record.Row, argv []string, out Command) {
	exit := out.Exit
	if out.Refused != "" {
		row.Type, row.Reason = record.TypeRejected, out.Refused
	}
	row.Argv, row.Exit, row.Stdout, row.Stderr = argv, &exit, out.Stdout, out.Stderr
}
