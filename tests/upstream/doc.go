// Package upstream is the end-to-end test of real MCP servers from npm behind the wall:
// every fault family, probes, chaos record, secrets and bad servers (its tests are package
// upstream_test).
package upstream
