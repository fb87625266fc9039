// Package shim is the end-to-end test of the script wall (proxies/shim): the portal
// example (examples/portal) run under `chaos run` by its reference agents written as
// shell scripts, on the embedded server, with every tool fault family the twin takes
// (its tests are package shim_test); the operator (examples/portal/operator.yaml) that
// logs in again and resumes the agent, hostile session ids and replies, and units given
// per task.
package shim
