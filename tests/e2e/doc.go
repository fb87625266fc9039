// Package e2e tests the chaos binary from the outside: it builds `chaos` once, runs it
// as a subprocess the way an agent or an operator would (pipes, signals, an MCP client
// written in another language), and reads back the record it leaves.
package e2e
