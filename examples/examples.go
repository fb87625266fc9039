// Package examples holds experiment specs that run as they are, and embeds them in the
// binary so `chaos demo` needs nothing beyond it.
package examples

import _ "embed"

// SupportTicket is examples/support-ticket.yaml: the reference agents blind and
// verifying, as two arms, against every tool fault of a small ticket system.
//
//go:embed support-ticket.yaml
var SupportTicket []byte
