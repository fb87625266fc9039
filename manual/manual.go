// Package manual is manual mode: the wall in front of a real MCP server for an agent
// chaos cannot start (a desktop app), one hidden fault per run the user opens and ends.
//
// Everything lives in the user's data directory:
//
//	<data>/proxy/servers/NAME.json    the real server behind NAME (Setup)
//	<data>/proxy/deck.json            the shuffled deck of faults, one per run
//	<data>/proxy/current.json         the open run, if any (Start .. End)
//	<data>/proxy/runs/ID/             its record(s) and result.json
//	<data>/proxy/results.jsonl        one line per ended run (Results)
package manual

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/redact"
	"github.com/crashwall/chaos/worker"
)

// Families are the faults manual runs deal: every family whose entry says how manual
// mode deals it (faults.Manual), each on the first call of the kind it applies to. As
// many runs as families see each once.
var Families = faults.ManualFamilies()

// what says what a manual fault did, for the end of a run (its faults.Manual).
func what(family string) string {
	if f, ok := faults.Lookup(family); ok && f.Manual != nil {
		return f.Manual.What
	}
	return ""
}

// Mode is manual mode on one data directory, printing to Out.
type Mode struct {
	// DataDir is the data directory as the user gave it ("": $XDG_DATA_HOME/chaos); the
	// entry Setup prints passes it on to the proxy it starts.
	DataDir string
	Out     io.Writer
	// Shuffle shuffles a new deck (nil: at random; tests replace it).
	Shuffle func([]string)
}

// InputError is a mistake of the user's (a missing flag, no server set up, no run open):
// the command exits 1 on it.
type InputError struct{ Err error }

func (e *InputError) Error() string  { return e.Err.Error() }
func (e *InputError) Unwrap() error  { return e.Err }
func (e *InputError) BadInput() bool { return true }

func badInput(err error) error { return &InputError{Err: err} }

// server is a server set up for manual mode.
type server struct {
	Name    string   `json:"name"`
	Command string   `json:"command"`
	Args    []string `json:"args,omitempty"`
}

// run is a manual run: open in current.json, ended in runs/ID/result.json.
type run struct {
	ID      string    `json:"id"`
	Name    string    `json:"name"`
	Family  string    `json:"family"`
	Seed    int64     `json:"seed"`
	Started time.Time `json:"started"`
	// Set when the run ends.
	Ended   time.Time `json:"ended,omitzero"`
	Said    string    `json:"said,omitempty"`
	Tool    string    `json:"tool,omitempty"`
	Fired   int       `json:"fired,omitempty"`
	Calls   int       `json:"calls,omitempty"`
	World   string    `json:"world,omitempty"`
	Verdict string    `json:"verdict,omitempty"`
	Why     string    `json:"why,omitempty"`
}

type deck struct {
	Deck []string `json:"deck"`
	Next int      `json:"next"`
	// Runs counts the runs dealt so far.
	Runs int `json:"runs"`
}

// dir is the folder manual mode keeps its files in.
func (m *Mode) dir() (string, error) {
	d := m.DataDir
	if d == "" {
		var err error
		if d, err = worker.DefaultDataDir(); err != nil {
			return "", err
		}
	}
	return filepath.Join(d, "proxy"), nil
}

// validName is a server name an MCP configuration takes as a key, and a file name.
func validName(n string) bool {
	return n != "" && strings.Trim(n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") == "" && !strings.Contains(n, "__")
}

// Setup keeps the real server command behind name and prints the MCP configuration
// entry that starts chaos (the binary chaos) as its proxy.
func (m *Mode) Setup(name string, command []string, chaos string) error {
	if !validName(name) {
		return badInput(fmt.Errorf("--name is required: the server's name in your MCP configuration (letters, digits, _, - and .)"))
	}
	if len(command) == 0 {
		return badInput(fmt.Errorf("give the server's command after --: chaos proxy setup --name %s -- CMD ARGS...", name))
	}
	dir, err := m.dir()
	if err != nil {
		return err
	}
	sv := server{Name: name, Command: command[0], Args: command[1:]}
	if err := writeJSON(filepath.Join(dir, "servers", name+".json"), sv); err != nil {
		return err
	}
	args := []string{"proxy", "serve", "--name", name}
	if m.DataDir != "" {
		args = append(args, "--data-dir", m.DataDir)
	}
	entry := map[string]map[string]any{"mcpServers": {name: map[string]any{"command": chaos, "args": args}}}
	b, _ := json.MarshalIndent(entry, "", "  ")
	fmt.Fprintf(m.Out, "Put this entry in your MCP configuration in place of %q (keep its \"env\", if it has one: chaos passes it on to the server):\n\n%s\n\n", name, b)
	fmt.Fprintf(m.Out, "Restart your agent so it starts the proxy. Until you run `chaos proxy start` every call passes through untouched and nothing is recorded.\n")
	return nil
}

func loadServer(dir, name string) (server, error) {
	var sv server
	if !validName(name) {
		return sv, badInput(fmt.Errorf("--name %q is not a server's name (letters, digits, _, - and .)", name))
	}
	b, err := os.ReadFile(filepath.Join(dir, "servers", name+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return sv, badInput(fmt.Errorf("no server %q is set up: run chaos proxy setup --name %s -- CMD first", name, name))
	}
	if err != nil {
		return sv, err
	}
	return sv, json.Unmarshal(b, &sv)
}

func readRun(path string) (run, bool) {
	var r run
	b, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(b, &r) != nil || r.ID == "" {
		return r, false
	}
	return r, true
}

func writeJSON(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(redact.Known.Bytes(b), '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func appendJSONLine(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.Write(append(redact.Known.Bytes(b), '\n'))
	return err
}

func randomUint() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
