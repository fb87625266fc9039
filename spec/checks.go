package spec

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

var taskKeys = []string{"id", "prompt", "checks", "state_checks", "probes", "units"}

// tasks reads a tasks list: each task has an id, a prompt and its checks.
func (d *decoder) tasks(n *yaml.Node) []Task {
	if l := deref(n); isNull(l) || (l.Kind == yaml.SequenceNode && len(l.Content) == 0) {
		d.errorf(d.keyOf(n), "tasks is empty: give at least one task")
		return nil
	}
	var out []Task
	first := map[string]int{}
	for i, item := range d.list(n, "tasks") {
		where := itemWhere(item, "id", "task", i)
		f := d.fields(item, where, taskKeys, nil)
		if item.Kind != yaml.MappingNode {
			continue
		}
		t := Task{
			ID:          d.text(f["id"], where+": id"),
			Prompt:      d.taskText(f["prompt"], where+": prompt"),
			StateChecks: d.stateChecks(f["state_checks"]),
			TextChecks:  d.textChecks(f["checks"]),
			Probes:      d.probes(f["probes"]),
			Units:       d.texts(f["units"], where+": units", false),
		}
		if t.Prompt == "" {
			d.errorf(item, "%s has no prompt", where)
		}
		if t.ID == "" {
			d.errorf(item, "task #%d has no id", i+1)
			continue
		}
		if line, ok := first[t.ID]; ok {
			d.errorf(f["id"], "task %q is defined twice (first at line %d)", t.ID, line)
			continue
		}
		first[t.ID] = item.Line
		out = append(out, t)
	}
	return out
}

var stateOps = []string{"equals", "not_equals", "contains", "matches", "absent"}

func (d *decoder) stateChecks(n *yaml.Node) []StateCheck {
	var out []StateCheck
	for _, item := range d.list(n, "state_checks") {
		where := "state check"
		if key := peek(item, "key"); key != "" {
			where = fmt.Sprintf("state check on %q", key)
		}
		f := d.fields(item, where, append([]string{"key"}, stateOps...), nil)
		if item.Kind != yaml.MappingNode {
			continue
		}
		c := StateCheck{Key: d.text(f["key"], "state check key"), Line: item.Line}
		if c.Key == "" {
			d.errorf(item, "state check without a key")
			continue
		}
		c.Op = d.oneOf(item, f, where, stateOps)
		switch c.Op {
		case "":
			continue
		case "equals":
			c.Equals, _ = d.value(f["equals"], where+": equals")
		case "not_equals":
			c.NotEquals, _ = d.value(f["not_equals"], where+": not_equals")
		case "contains":
			c.Contains = d.text(f["contains"], where+": contains")
		case "matches":
			c.Matches = d.regexp(f["matches"], where+": matches")
		case "absent":
			if v, ok := d.boolean(f["absent"], where+": absent"); ok && !v {
				d.errorf(f["absent"], "%s: absent takes only true (to check a key is set, use matches: \".\")", where)
			} else if !ok && isNull(deref(f["absent"])) {
				d.errorf(f["absent"], "%s: absent takes only true", where)
			}
			c.Absent = true
		}
		out = append(out, c)
	}
	return out
}

var textOps = []string{"contains", "not_contains", "regex", "not_regex"}

// textChecks are checks of the agent's closing message: {contains: "urgent"}.
func (d *decoder) textChecks(n *yaml.Node) []TextCheck {
	var out []TextCheck
	for _, item := range d.list(n, "checks") {
		f := d.fields(item, "check", textOps, nil)
		if item.Kind != yaml.MappingNode {
			continue
		}
		c := TextCheck{Op: d.oneOf(item, f, "check", textOps), Line: item.Line}
		switch c.Op {
		case "":
			continue
		case "regex", "not_regex":
			c.Value = d.regexp(f[c.Op], "check: "+c.Op)
		default:
			c.Value = d.text(f[c.Op], "check: "+c.Op)
		}
		out = append(out, c)
	}
	return out
}

// oneOf is the one comparison given in f, or "" after reporting none or several.
func (d *decoder) oneOf(item *yaml.Node, f map[string]*yaml.Node, where string, ops []string) string {
	var given []string
	for _, op := range ops {
		if _, ok := f[op]; ok {
			given = append(given, op)
		}
	}
	switch len(given) {
	case 0:
		d.errorf(item, "%s needs one of %s", where, strings.Join(ops, ", "))
		return ""
	case 1:
		return given[0]
	}
	d.errorf(item, "%s has several comparisons (%s); keep one", where, strings.Join(given, ", "))
	return ""
}
