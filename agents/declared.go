package agents

import (
	"bytes"
	"fmt"
	"os"

	"gopkg.in/yaml.v3"

	"github.com/crashwall/chaos/probes"
)

// A declared script is a reference agent's task written out as calls, for real servers,
// where no state check of a simulated world says what to write:
//
//	sources: [{tool: read_graph}]
//	writes:
//	  - name: Alice
//	    tool: create_entities
//	    args: {entities: [{name: Alice, entityType: person, observations: [likes tea]}]}
//	    check: {tool: open_nodes, args: {names: [Alice]}, path: "$.entities[0].name", equals: Alice}
//
// A verifying agent makes each check's call after the writes and compares the value at
// its JSON path of the reply's text; a write whose check fails is made again.
type declared struct {
	Sources []declaredCall  `yaml:"sources"`
	Writes  []declaredWrite `yaml:"writes"`
}

type declaredCall struct {
	Tool string         `yaml:"tool"`
	Args map[string]any `yaml:"args"`
}

type declaredWrite struct {
	Name  string         `yaml:"name"`
	Tool  string         `yaml:"tool"`
	Args  map[string]any `yaml:"args"`
	Check *struct {
		Tool   string         `yaml:"tool"`
		Args   map[string]any `yaml:"args"`
		Path   string         `yaml:"path"`
		Equals any            `yaml:"equals"`
	} `yaml:"check"`
}

// LoadScript reads a declared script from a YAML (or JSON) file.
func LoadScript(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var d declared
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	sc := &Script{}
	for i, c := range d.Sources {
		if c.Tool == "" {
			return nil, fmt.Errorf("%s: source #%d has no tool", path, i+1)
		}
		sc.Sources = append(sc.Sources, Step{Tool: c.Tool, Args: orEmpty(c.Args)})
	}
	for i, w := range d.Writes {
		if w.Tool == "" {
			return nil, fmt.Errorf("%s: write #%d has no tool", path, i+1)
		}
		name := w.Name
		if name == "" {
			name = w.Tool
		}
		st := Step{Tool: w.Tool, Args: orEmpty(w.Args), Key: name, Want: "done"}
		read := Step{Key: name}
		if w.Check != nil {
			if p := w.Check.Path; p != "" && p[0] != '$' {
				return nil, fmt.Errorf("%s: write %q: check: path must be a JSON path starting with $, got %q", path, name, p)
			}
			st.Want = w.Check.Equals
			read = Step{Tool: w.Check.Tool, Args: orEmpty(w.Check.Args), Key: name, Want: w.Check.Equals, Path: w.Check.Path}
			if read.Path == "" {
				read.Path = "$"
			}
		}
		sc.Writes = append(sc.Writes, st)
		sc.Reads = append(sc.Reads, read)
		sc.ValueFields = append(sc.ValueFields, "")
	}
	if len(sc.Writes) == 0 {
		return nil, fmt.Errorf("%s: the script has no writes, so a reference agent has nothing to do", path)
	}
	return sc, nil
}

// readBack says whether a read-back reply shows the value a declared write wants.
func readBack(text string, r Step) bool {
	v, err := probes.JSONPath(probes.TextDoc(text), r.Path)
	return err == nil && equal(v, r.Want)
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}
