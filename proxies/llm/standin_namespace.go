package llm

// Tool namespaces of the Responses API, for the stand-in model. A request may group
// function tools under a namespace tool:
//
//	{"type": "namespace", "name": "mcp__chaos", "tools": [{"type": "function", "name": "read_email", ...}]}
//
// (Codex lists each MCP server's tools so, the server "chaos" as mcp__chaos). The model
// then calls such a tool by its own name with the namespace beside it, and the client
// finds it by the pair:
//
//	{"type": "function_call", "name": "read_email", "namespace": "mcp__chaos", "arguments": "{}", "call_id": ...}
//
// A call named mcp__chaos__read_email, the name a script writes for every client,
// would be "unsupported call" to such a client. So the stand-in answers as the real
// API would for that request: a call whose scripted name is a namespace's tool is
// written as that tool with its namespace.

import "strings"

// placeNamespaces rewrites, in the whole Responses API response resp, every
// function_call whose name is not a top-level function tool of the request req but
// names a tool in one of its namespaces: NAMESPACE__TOOL, NAMESPACETOOL when the
// namespace ends in "_", or TOOL when exactly one namespace has it. Other calls are
// left as they are.
func placeNamespaces(req, resp *jsonObject) {
	top := map[string]bool{}
	var spaces []*jsonObject
	for _, t := range objects(req.arr("tools")) {
		switch t.str("type") {
		case "namespace":
			spaces = append(spaces, t)
		default:
			if n := t.str("name"); n != "" {
				top[n] = true
			}
		}
	}
	if len(spaces) == 0 {
		return
	}
	for _, item := range objects(resp.arr("output")) {
		if item.str("type") != "function_call" || item.has("namespace") || top[item.str("name")] {
			continue
		}
		if ns, tool, ok := inNamespace(spaces, item.str("name")); ok {
			item.set("name", tool)
			insertAfter(item, "name", "namespace", ns)
		}
	}
}

// inNamespace finds the namespace and tool a scripted call name stands for.
func inNamespace(spaces []*jsonObject, name string) (ns, tool string, ok bool) {
	var bare []string // namespaces that have a tool called name itself
	for _, s := range spaces {
		space := s.str("name")
		for _, t := range objects(s.arr("tools")) {
			tn := t.str("name")
			switch {
			case tn == "":
			case name == space+"__"+tn, strings.HasSuffix(space, "_") && name == space+tn:
				return space, tn, true
			case name == tn:
				bare = append(bare, space)
			}
		}
	}
	if len(bare) == 1 {
		return bare[0], name, true
	}
	return "", "", false
}

// insertAfter sets key k to v in o, placed right after the key after (at the end when
// o has no such key), the order in which OpenAI writes a function_call's fields.
func insertAfter(o *jsonObject, after, k string, v any) {
	o.del(k)
	o.set(k, v)
	for i, key := range o.keys {
		if key != after {
			continue
		}
		last := len(o.keys) - 1
		copy(o.keys[i+2:], o.keys[i+1:last])
		o.keys[i+1] = k
		return
	}
}
