package hub

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// ToolSource is what stands behind the wall: the spec's simulated world (*world.World)
// or real MCP servers (*upstream.Upstream). The hub serves its tools; faults see it through
// faults.World, so the families do not know which one they damage.
//
//	Hub.Call ──> faults.Decide ──fires──> Family.Apply(ToolSource)
//	                          └─no─────> ToolSource.Call(Perform)
type ToolSource interface {
	faults.World
	// Tools are the tools served, in order.
	Tools() []spec.Tool
	// Tool returns the tool with that name.
	Tool(name string) (spec.Tool, bool)
	// State is the simulated part of the world (real servers are read by probes).
	State() map[string]any
}

var _ ToolSource = (*world.World)(nil)

// bindsTo says whether a condition armed without a tool (chaos proxy: "the first call of
// a kind") takes its tool from this call: the first call to a tool its family applies to.
func bindsTo(s *spec.Spec, c faults.Condition, t spec.Tool) bool {
	f, ok := faults.Lookup(c.Family)
	return ok && f.Variants(s, t) != nil
}

// damagedStructured keeps a damaged reply's structured content in step with its text: a
// fault that changed the text of a real reply (cut it, emptied it, made it stale) must not
// leave the intact data in structuredContent, where clients such as Claude Code read it.
// A family that damages structured content its own way (faults.StructuredDamager, as a
// premature read empties it) does; otherwise the damaged text stands in when it is a JSON
// object, and there is none when it is not.
func damagedStructured(fam faults.Family, reply, real world.Reply) world.Reply {
	if reply.Structured == "" || reply.Text == real.Text || reply.Structured != real.Structured {
		return reply
	}
	if d, ok := fam.(faults.StructuredDamager); ok {
		reply.Structured = d.DamageStructured(real.Structured)
		return reply
	}
	reply.Structured = StructuredOf(reply.Text)
	return reply
}

// StructuredOf is text as structured content: the text when it is a JSON object, else "",
// written as StructuredJSON writes a real server's, so a damaged reply's structured
// content differs from the real one's only in the fault.
func StructuredOf(text string) string {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var m map[string]any
	if dec.Decode(&m) != nil || m == nil || dec.More() {
		return ""
	}
	return StructuredJSON(m)
}

// StructuredJSON is structured content as the hub keeps it: compact, keys sorted (the SDK
// hands it over as a map, its order lost) and <, > and & as they are.
func StructuredJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return ""
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// failureReporter is a ToolSource that can fail during a trial (a real server exiting);
// the hub records the failure as an error row.
type failureReporter interface {
	OnFailure(fn func(reason string))
}

// UpstreamFailurePrefix starts the reason of an error row that says a real server failed
// (upstream.UpstreamFailure reads it back).
const UpstreamFailurePrefix = "upstream: "

// Version is the wall's version as MCP clients and the OpenAPI description see it.
var Version = "0.1.0"
