package llm

import "github.com/crashwall/chaos/faults"

// unoffered replaces the tool call m of the step for (rq, turn) by the step's Unoffered
// text when it has one and the request req does not offer its tool. A request offers a
// tool that its tools list names: a function (Chat Completions' function.name, the
// Responses API's name, a tool of one of its namespaces as NAMESPACE__TOOL or TOOL) or
// an Anthropic tool.
func (s *standin) unoffered(req *jsonObject, rq modelRequest, turn int, m faults.ModelMessage) faults.ModelMessage {
	step, ok := s.step(rq, turn)
	if !ok || step.Tool == "" || step.Unoffered == "" || offers(req, step.Tool) {
		return m
	}
	return faults.ModelMessage{Text: step.Unoffered, FinishReason: faults.FinishStop}
}

// offers reports whether the request's tools list names the tool.
func offers(req *jsonObject, name string) bool {
	var spaces []*jsonObject
	for _, t := range objects(req.arr("tools")) {
		if t.str("type") == "namespace" {
			spaces = append(spaces, t)
			continue
		}
		if t.str("name") == name || t.obj("function").str("name") == name {
			return true
		}
	}
	_, _, ok := inNamespace(spaces, name)
	return ok
}
