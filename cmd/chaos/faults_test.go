package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

const exampleSpec = "../../examples/support-ticket.yaml"

// TestFaultsTable: `chaos faults` on the example prints exactly the golden table.
func TestFaultsTable(t *testing.T) {
	var out bytes.Buffer
	if err := faultsRun(&FaultsOptions{IO: &IOStreams{Out: &out, ErrOut: &out}, Spec: exampleSpec}); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "faults-support-ticket.txt")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/chaos -run TestFaultsTable -update to write it)", err)
	}
	if out.String() != string(want) {
		t.Errorf("chaos faults printed:\n%s\nwant (%s):\n%s", out.String(), golden, want)
	}
}

// TestFaultsJSON: --json prints every condition of the table, in the same order, with
// what it does for people and the fields a script needs.
func TestFaultsJSON(t *testing.T) {
	var table, js bytes.Buffer
	if err := faultsRun(&FaultsOptions{IO: &IOStreams{Out: &table}, Spec: exampleSpec}); err != nil {
		t.Fatal(err)
	}
	if err := faultsRun(&FaultsOptions{IO: &IOStreams{Out: &js}, Spec: exampleSpec, JSON: true}); err != nil {
		t.Fatal(err)
	}
	var views []struct {
		ID              string `json:"id"`
		Family          string `json:"family"`
		Tool            string `json:"tool"`
		SuccessPossible *bool  `json:"success_possible"`
		What            string `json:"what"`
		Hits            string `json:"hits"`
		Receives        string `json:"receives"`
		World           string `json:"world"`
	}
	if err := json.Unmarshal(js.Bytes(), &views); err != nil {
		t.Fatalf("--json output does not parse: %v\n%s", err, js.String())
	}
	// The table's rows, after its two header lines and the column names.
	lines := strings.Split(strings.TrimSpace(table.String()), "\n")[3:]
	var rows []string
	for _, l := range lines {
		if l == "" {
			break
		}
		rows = append(rows, l)
	}
	if len(views) != len(rows) || len(views) == 0 {
		t.Fatalf("--json has %d conditions, the table %d", len(views), len(rows))
	}
	for i, v := range views {
		if f := strings.Fields(rows[i]); f[0] != v.ID {
			t.Errorf("condition %d: --json %q, table %q", i, v.ID, f[0])
		}
		if v.SuccessPossible == nil || v.What == "" || !strings.Contains(rows[i], v.What) {
			t.Errorf("%s: success_possible %v what %q", v.ID, v.SuccessPossible, v.What)
		}
		if v.ID == "clean" {
			if i != 0 || v.Family != "" {
				t.Errorf("clean is condition %d with family %q, want first with none", i, v.Family)
			}
			continue
		}
		if v.Family == "" || v.Tool == "" || v.Hits == "" || v.Receives == "" || v.World == "" {
			t.Errorf("%s: %+v, want family, tool, hits, receives and world", v.ID, v)
		}
	}
}

// TestFaultsBadSpec: a spec with a problem is the user's to fix: exit code 1 and the
// problem at its file and line, through the command as main runs it.
func TestFaultsBadSpec(t *testing.T) {
	example, err := os.ReadFile(exampleSpec)
	if err != nil {
		t.Fatal(err)
	}
	line := 1 + bytes.Count(example[:bytes.Index(example, []byte("faults: [all]"))], []byte("\n"))
	cases := []struct {
		name string
		edit func([]byte) []byte
		want string // after "path:"
	}{
		{"unknown fault", func(b []byte) []byte {
			return bytes.Replace(b, []byte("faults: [all]"), []byte("faults: [phantom_sucess]"), 1)
		}, `:` + strconv.Itoa(line) + `: unknown fault family "phantom_sucess" (did you mean phantom_success?)`},
		{"not YAML", func(b []byte) []byte {
			return bytes.Replace(b, []byte("faults: [all]"), []byte("faults: [all"), 1)
		}, `:` + strconv.Itoa(line)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "spec.yaml")
			if err := os.WriteFile(path, c.edit(example), 0o644); err != nil {
				t.Fatal(err)
			}
			var out, errOut bytes.Buffer
			cmd := NewCmdRoot(&IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
			cmd.SetArgs([]string{"faults", path})
			err := cmd.Execute()
			if code := ExitCode(err); code != ExitBadInput {
				t.Errorf("exit code %d (%v), want %d", code, err, ExitBadInput)
			}
			if err == nil || !strings.Contains(err.Error(), path+c.want) {
				t.Errorf("error %q, want it to contain %q", err, path+c.want)
			}
			if out.Len() != 0 {
				t.Errorf("printed a table for a bad spec:\n%s", out.String())
			}
		})
	}

	t.Run("missing file", func(t *testing.T) {
		err := faultsRun(&FaultsOptions{IO: &IOStreams{Out: &bytes.Buffer{}}, Spec: filepath.Join(t.TempDir(), "nope.yaml")})
		if code := ExitCode(err); code != ExitBadInput || !strings.Contains(err.Error(), "nope.yaml") {
			t.Errorf("exit code %d for %v, want %d naming the file", code, err, ExitBadInput)
		}
	})
}
