package spec

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/crashwall/chaos/cost"
)

// NoModelFault is the model fault of a clean run.
const NoModelFault = "none"

// ModelSpec is the spec's model chaos table: where the model proxy ({llm_url}) forwards
// to and the one model fault it injects. It is not part of the spec's identity: a faulted
// spec and a clean one that differ only here are paired (see Identity).
type ModelSpec struct {
	// Upstream is the base URL the proxy forwards to, as the agent's SDK takes it
	// (https://api.openai.com/v1, https://api.anthropic.com, a stand-in). It may hold
	// ${VAR}s, expanded where the trial runs (see ExpandUpstream); "" means no proxy.
	Upstream string `json:"upstream,omitempty"`
	// Fault is a name from the model catalogue (`chaos faults --model`); default none.
	Fault string `json:"fault,omitempty"`
	// Rate is the chance that an eligible call is faulted, from 0 to 1 (default 1).
	Rate float64 `json:"rate,omitempty"`
	// Steps names the positions that are eligible (default: every position).
	Steps []string `json:"steps,omitempty"`
	// StaleValues are values per argument name that compound_stale_data may put in.
	StaleValues map[string][]any `json:"stale_values,omitempty"`
	// Entities are other entities per argument name, for compound_wrong_entity.
	Entities map[string][]string `json:"entities,omitempty"`
	// Prices are prices per model (USD per million tokens) in place of the defaults
	// (cost.Defaults, docs/model.md).
	Prices cost.Table `json:"prices,omitempty"`
	// Reviewer is the model that reviews trials whose world the record cannot tell
	// (spec/reviewer.go); nil: none.
	Reviewer *ReviewerSpec `json:"reviewer,omitempty"`
}

// FaultName is the model fault, none when the spec names none.
func (m ModelSpec) FaultName() string {
	if m.Fault == "" {
		return NoModelFault
	}
	return m.Fault
}

// RateOrDefault is the rate, 1 when the spec gives none.
func (m ModelSpec) RateOrDefault() float64 {
	if m.Rate == 0 {
		return 1
	}
	return m.Rate
}

// Armed says whether a model fault is injected: a proxy and a fault other than none.
func (m ModelSpec) Armed() bool {
	return m.Upstream != "" && m.FaultName() != NoModelFault
}

// envRef is a ${VAR} in model.upstream, a server header, a webhook or agent.env.
var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// ExpandUpstream is model.upstream with its ${VAR}s replaced from lookup (os.LookupEnv
// when nil), checked to be an http(s) base URL. A variable that is not set is an error,
// never an empty string.
func (m ModelSpec) ExpandUpstream(lookup func(string) (string, bool)) (string, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	// An empty value is no base URL: taken as unset.
	out, err := ExpandSecrets(m.Upstream, func(name string) (string, bool) {
		v, ok := lookup(name)
		return v, ok && v != ""
	})
	if err != nil {
		return "", fmt.Errorf("model.upstream %q: %v", m.Upstream, err)
	}
	if err := checkUpstream(out); err != nil {
		return "", fmt.Errorf("model.upstream %q: %v", out, err)
	}
	return out, nil
}

// checkUpstream says what is wrong with a base URL for the proxy to forward to.
func checkUpstream(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return fmt.Errorf("not a URL: %v", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("must be an http:// or https:// base URL")
	case u.Host == "":
		return fmt.Errorf("has no host")
	case u.User != nil:
		// The manifest records the upstream: a key belongs in the agent's own headers,
		// which the proxy forwards and never writes down.
		return fmt.Errorf("must not carry credentials; the agent's API key header is forwarded as it is")
	case u.Fragment != "":
		return fmt.Errorf("must not have a #fragment")
	}
	return nil
}

// The model catalogue lives in package faults, which builds on this one; it registers
// its names here so the loader can check model.fault.
var modelCatalogue struct {
	known func(string) bool
	names func() []string
}

// RegisterModelFaults tells the loader which model fault names exist. Package faults
// calls it from its init; a program that loads specs without linking faults leaves
// model.fault unchecked until the proxy refuses it.
func RegisterModelFaults(known func(string) bool, names func() []string) {
	modelCatalogue.known, modelCatalogue.names = known, names
}

var modelKeys = []string{"upstream", "fault", "rate", "steps", "stale_values", "entities", "prices", "reviewer"}

// model reads the native `model:` section.
func (d *decoder) model(n *yaml.Node) ModelSpec {
	f := d.fields(n, "model", modelKeys, map[string]string{
		"faults": "fault", "base_url": "upstream", "url": "upstream", "positions": "steps", "step": "steps",
	})
	m := ModelSpec{
		Upstream: d.text(f["upstream"], "model.upstream"),
		Fault:    d.text(f["fault"], "model.fault"),
		Steps:    d.texts(f["steps"], "model.steps", true),
		Prices:   d.prices(f["prices"]),
		Reviewer: d.reviewer(f["reviewer"]),
	}
	if m.Upstream != "" && !envRef.MatchString(m.Upstream) {
		if err := checkUpstream(m.Upstream); err != nil {
			d.errorf(f["upstream"], "model.upstream %q: %v", m.Upstream, err)
		}
	}
	if m.Fault != "" && modelCatalogue.known != nil && !modelCatalogue.known(m.Fault) {
		names := modelCatalogue.names()
		msg := fmt.Sprintf("unknown model fault %q", m.Fault)
		if c, ok := closest(m.Fault, names); ok {
			msg += fmt.Sprintf(" (did you mean %s?)", c)
		}
		d.errorf(f["fault"], "%s (known: %s)", msg, strings.Join(names, ", "))
	}
	if m.Fault != "" && m.Fault != NoModelFault && m.Upstream == "" {
		d.errorf(f["fault"], "model.fault %s needs model.upstream: the proxy that injects it forwards to that base URL", m.Fault)
	}
	if r := deref(f["rate"]); !isNull(r) {
		var v float64
		if r.Kind != yaml.ScalarNode || (r.ShortTag() != "!!int" && r.ShortTag() != "!!float") || r.Decode(&v) != nil {
			d.errorf(r, "model.rate must be a number from 0 to 1, got %s", got(r))
		} else if v < 0 || v > 1 || v != v {
			d.errorf(r, "model.rate must be from 0 to 1, got %s", r.Value)
		} else if v == 0 {
			// The proxy reads 0 as its default of 1; a run that must not fire says fault: none.
			d.errorf(r, "model.rate 0 never fires: to run clean, set model.fault: none")
		} else {
			m.Rate = v
		}
	}
	for i, s := range m.Steps {
		if strings.TrimSpace(s) == "" {
			d.errorf(f["steps"], "model.steps: step #%d is empty", i+1)
		} else if slices.Contains(m.Steps[:i], s) {
			d.errorf(f["steps"], "model.steps lists %q twice", s)
		}
	}
	if sv := deref(f["stale_values"]); !isNull(sv) {
		if sv.Kind != yaml.MappingNode {
			d.errorf(sv, "model.stale_values must be a mapping of argument names to lists of values, got %s", got(sv))
		} else {
			m.StaleValues = map[string][]any{}
			for _, p := range d.pairs(sv) {
				what := "model.stale_values." + p.key.Value
				v, ok := d.value(p.val, what)
				if !ok {
					continue
				}
				list, isList := v.([]any)
				if !isList {
					list = []any{v}
				}
				m.StaleValues[p.key.Value] = list
			}
		}
	}
	if en := deref(f["entities"]); !isNull(en) {
		if en.Kind != yaml.MappingNode {
			d.errorf(en, "model.entities must be a mapping of argument names to lists of text, got %s", got(en))
		} else {
			m.Entities = map[string][]string{}
			for _, p := range d.pairs(en) {
				m.Entities[p.key.Value] = d.texts(p.val, "model.entities."+p.key.Value, true)
			}
		}
	}
	return m
}

// Outcomes are named outcomes a spec declares besides the built-in verdicts: each holds
// or not in every trial, and `chaos diff` compares how often.
type Outcomes struct {
	// Failures are outcomes that are bad when they hold (a fault made things worse
	// when they hold more often).
	Failures []Outcome `json:"failures,omitempty"`
	// Successes are outcomes that are good when they hold.
	Successes []Outcome `json:"successes,omitempty"`
}

// All is every declared outcome, failures first.
func (o Outcomes) All() []Outcome {
	return append(slices.Clone(o.Failures), o.Successes...)
}

// Outcome is one named outcome: a regex on the agent's closing message, or a check of
// the final world. Exactly one of Closing and State is set.
type Outcome struct {
	Name string `json:"name"`
	// Closing is a regular expression that holds when it matches the closing message.
	Closing string `json:"closing,omitempty"`
	// State holds when the check passes on the final world.
	State *StateCheck `json:"state,omitempty"`
	// Failure says the outcome is one of the spec's failures (else a success).
	Failure bool `json:"failure,omitempty"`
	Line    int  `json:"-"`
}

// builtinVerdicts are taken by the verdicts; an outcome may not reuse them.
var builtinVerdicts = []string{"correct", "silent_wrong", "reported_honestly", "over_cautious", "unclear", "not_triggered", "no_verdict"}

var outcomeName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)

// outcomes reads the native `outcomes:` section: {failures: [...], successes: [...]}.
func (d *decoder) outcomes(n *yaml.Node) Outcomes {
	f := d.fields(n, "outcomes", []string{"failures", "successes"}, map[string]string{"failure": "failures", "success": "successes"})
	seen := map[string]int{}
	read := func(list *yaml.Node, kind string, failure bool) []Outcome {
		var out []Outcome
		for i, item := range d.list(list, "outcomes."+kind) {
			where := fmt.Sprintf("outcomes.%s #%d", kind, i+1)
			if name := peek(item, "name"); name != "" {
				where = fmt.Sprintf("outcome %q", name)
			}
			of := d.fields(item, where, []string{"name", "closing", "state"}, map[string]string{"regex": "closing", "matches": "closing", "state_check": "state"})
			if item.Kind != yaml.MappingNode {
				continue
			}
			o := Outcome{Name: d.text(of["name"], where+": name"), Failure: failure, Line: item.Line}
			switch {
			case o.Name == "":
				d.errorf(item, "%s has no name", where)
				continue
			case !outcomeName.MatchString(o.Name):
				d.errorf(of["name"], "%s: use letters, digits, _, . and - in an outcome's name", where)
				continue
			case slices.Contains(builtinVerdicts, o.Name):
				d.errorf(of["name"], "%s: the name is taken by a built-in verdict; choose another", where)
				continue
			}
			if line, ok := seen[o.Name]; ok {
				d.errorf(of["name"], "outcome %q is declared twice (first at line %d)", o.Name, line)
				continue
			}
			seen[o.Name] = item.Line
			_, hasClosing := of["closing"]
			_, hasState := of["state"]
			switch {
			case hasClosing == hasState:
				d.errorf(item, "%s needs one of closing (a regex on the closing message) or state (a check of the final world)", where)
				continue
			case hasClosing:
				o.Closing = d.regexp(of["closing"], where+": closing")
				if o.Closing == "" {
					continue
				}
			default:
				st := deref(of["state"])
				if st == nil || st.Kind != yaml.MappingNode {
					d.errorf(of["state"], "%s: state must be a state check such as {key: priority, equals: urgent}, got %s", where, got(st))
					continue
				}
				checks := d.stateChecks(&yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{st}, Line: st.Line})
				if len(checks) != 1 {
					continue
				}
				o.State = &checks[0]
			}
			out = append(out, o)
		}
		return out
	}
	return Outcomes{
		Failures:  read(f["failures"], "failures", true),
		Successes: read(f["successes"], "successes", false),
	}
}

// Identity is what pairs two runs: a hash of the spec without its model table (and
// without where it was loaded from). Two specs with the same identity plan the same
// trials with the same seeds, whatever model fault each injects.
func (s *Spec) Identity() string {
	sum := sha256.Sum256(identityJSON(s))
	return hex.EncodeToString(sum[:])
}

func identityJSON(s *Spec) []byte {
	c := *s
	c.Model, c.Path = ModelSpec{}, ""
	// Where the agent runs is not what the experiment is: a run in containers pairs
	// with the same spec's run as processes (the same seeds, trial by trial).
	c.Agent.Runtime, c.Agent.Container = "", Container{}
	b, _ := json.Marshal(&c)
	return b
}

// IdentityDiff names the top-level parts of the two specs that differ, model table
// aside; nil when their identities are the same.
func IdentityDiff(a, b *Spec) []string {
	var ma, mb map[string]json.RawMessage
	json.Unmarshal(identityJSON(a), &ma)
	json.Unmarshal(identityJSON(b), &mb)
	var out []string
	for k, v := range ma {
		if w, ok := mb[k]; !ok || string(v) != string(w) {
			out = append(out, k)
		}
	}
	for k := range mb {
		if _, ok := ma[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// UsesToken says whether an agent command holds {name} as a token.
func UsesToken(command, name string) bool {
	for _, loc := range tokenPattern.FindAllStringIndex(command, -1) {
		if loc[0] > 0 && command[loc[0]-1] == '$' {
			continue
		}
		if command[loc[0]+1:loc[1]-1] == name {
			return true
		}
	}
	return false
}
