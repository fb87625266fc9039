package upstream

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crashwall/chaos/spec"
)

// Classification is what the wall takes a real server's tool to do, and why: faults that
// fabricate or swallow a write need to know which calls write.
type Classification struct {
	// Tool is the name the agent sees; Remote the name on the server.
	Tool   string      `json:"tool"`
	Server string      `json:"server"`
	Remote string      `json:"remote"`
	Effect spec.Effect `json:"effect"`
	// From says where the effect came from: the spec, the tool's annotations, its name or
	// its description, or the default.
	From string `json:"from"`
}

// Verbs that tell what a tool does from the first word of its name or description.
var (
	writeVerbs = words(`add append apply archive assign attach book cancel change clear close commit
		copy create delete deploy disable edit enable execute insert invite kill mark merge modify
		move patch pay post publish purge push put register remove rename replace reset restart
		revoke run save schedule send set start stop store submit tag toggle transfer trigger
		unassign update upload upsert write`)
	readVerbs = words(`check count describe download echo export fetch find get inspect list load
		lookup open peek preview query read retrieve return search show stat status summarize
		validate view watch`)
)

func words(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

var wordSplit = regexp.MustCompile(`[^A-Za-z]+`)

// firstWord is the first word of a tool name (create_entities, createEntity, create-entity).
func firstWord(name string) string {
	for _, part := range wordSplit.Split(name, -1) {
		if part == "" {
			continue
		}
		end := len(part)
		for i, r := range part {
			if i > 0 && unicode.IsUpper(r) {
				end = i
				break
			}
		}
		return strings.ToLower(part[:end])
	}
	return ""
}

// verb is what a word says a tool does, as the verb it is ("creates" is "create"); ""
// when it is no verb of either list.
func verb(w string) (spec.Effect, string) {
	for _, v := range []string{w, strings.TrimSuffix(w, "s"), strings.TrimSuffix(w, "es")} {
		switch {
		case v == "":
		case writeVerbs[v]:
			return spec.EffectWrite, v
		case readVerbs[v]:
			return spec.EffectRead, v
		}
	}
	return "", ""
}

// Classify says what a server's tool does: the spec's word first, then the tool's MCP
// annotations, then the verb its name or description starts with; a tool that gives no
// hint is taken as a read.
func Classify(s spec.Server, t *mcp.Tool) (spec.Effect, string) {
	if o, ok := s.Tools[t.Name]; ok && o.Effect != "" {
		return o.Effect, fmt.Sprintf("the spec (servers: %s: tools: %s: effect: %s)", s.Name, t.Name, o.Effect)
	}
	if a := t.Annotations; a != nil {
		switch {
		case a.ReadOnlyHint:
			return spec.EffectRead, "annotation readOnlyHint: true"
		case a.DestructiveHint != nil && *a.DestructiveHint:
			return spec.EffectWrite, "annotation destructiveHint: true"
		case a.DestructiveHint != nil || a.OpenWorldHint != nil || a.IdempotentHint:
			// The server gave hints and did not say read-only: by MCP's defaults it writes.
			return spec.EffectWrite, "annotation readOnlyHint: false"
		}
	}
	if e, v := verb(firstWord(t.Name)); e == spec.EffectWrite {
		return e, fmt.Sprintf("name: %q starts with %q, a verb that changes things", t.Name, v)
	} else if e == spec.EffectRead {
		return e, fmt.Sprintf("name: %q starts with %q, a verb that reads", t.Name, v)
	}
	if e, v := verb(firstWord(t.Description)); e == spec.EffectWrite {
		return e, fmt.Sprintf("description starts with %q, a verb that changes things", v)
	} else if e == spec.EffectRead {
		return e, fmt.Sprintf("description starts with %q, a verb that reads", v)
	}
	return spec.EffectRead, "no annotation, name or description says it writes: taken as a read (set effect: write in the spec if it does)"
}
