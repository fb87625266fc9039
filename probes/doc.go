// Package probes checks the world after a trial and judges the agent's claim: state,
// command, SQL and HTTP checks read what really happened; Extract and a Judge read
// what the agent said about it.
//
//	stdout, stderr, exit ─Extract(profile)─> Closing ─Judge.Classify─> Judgement (claim)
//	final state, real systems ─StateCheck/CommandCheck/SQLCheck/HTTPCheck─> Result (world)
//
// A Result with NoVerdict set means the probe could not run (a missing program, a
// database that is down); a Closing with Infra set means the agent never got to say
// anything about the task. Both are scored as no_verdict, never as behaviour.
package probes
