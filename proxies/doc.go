// Package proxies is the wall between an agent and its tools and model, each room of it a
// package below this one. This one holds only the tests that drive every transport alike
// (transport_test.go):
//
//	hub/       the hub: Hub.Call, ToolSource, positions, the record (every transport's bottom)
//	mcpwall/   the hub's tools as an MCP server (the official SDK) and the guard in front of it
//	stdio/     MCP on stdio: the stdio wall, the bridge to HTTP, the relay's unix socket
//	httpwall/  HTTP: MCP streamable HTTP, REST tools, the record's events, the protections
//	upstream/  real MCP servers as the hub's tool source, and chaos proxy's stdio server
//	llm/       the model API proxy ({llm_url}) and the stand-in model, with their codecs
//
// A new wall (a browser's CDP, a PATH shim for scripts) is a new package beside these that
// calls hub.Hub.Call as they do.
package proxies
