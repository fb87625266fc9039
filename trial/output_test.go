package trial

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crashwall/chaos/run"
)

// TestTailFile: whatever the sizes of the writes, the file ends holding exactly the last
// limit bytes of the stream, never holds more than twice the limit (plus one write), and
// the bytes dropped are counted.
func TestTailFile(t *testing.T) {
	var stream bytes.Buffer
	for i := 0; stream.Len() < 100_000; i++ {
		fmt.Fprintf(&stream, "line %d\n", i)
	}
	data := stream.Bytes()
	cases := []struct {
		name  string
		limit int64
		chunk int
	}{
		{"chunks smaller than the limit", 1000, 7},
		{"chunks larger than the limit", 1000, 4097},
		{"one write", 1000, len(data)},
		{"limit above the stream", 1 << 20, 512},
		{"limit of one byte", 1, 33},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := os.Create(filepath.Join(t.TempDir(), "out"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			tf := &tailFile{f: f, limit: c.limit}
			for off := 0; off < len(data); off += c.chunk {
				end := min(off+c.chunk, len(data))
				if n, err := tf.Write(data[off:end]); err != nil || n != end-off {
					t.Fatalf("Write = %d, %v", n, err)
				}
				if st, _ := f.Stat(); st.Size() > 2*c.limit+int64(c.chunk) {
					t.Fatalf("the file holds %d bytes, more than twice the limit %d and a write", st.Size(), c.limit)
				}
			}
			if err := tf.keepTail(); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(f.Name())
			want := data[max(0, len(data)-int(c.limit)):]
			if !bytes.Equal(got, want) {
				t.Errorf("the file holds %d bytes ending %q, want the stream's last %d", len(got), got[max(0, len(got)-20):], len(want))
			}
			if tf.dropped() != int64(len(data)-len(want)) {
				t.Errorf("dropped %d, want %d", tf.dropped(), len(data)-len(want))
			}
		})
	}
}

// TestRunAgentOutputCap: an agent's output past the cap keeps its tail, and result says
// what was dropped; one that writes without end until its timeout leaves a file of the
// cap's size, not of what it wrote.
func TestRunAgentOutputCap(t *testing.T) {
	const limit = 64 << 10
	t.Run("tail kept", func(t *testing.T) {
		h, env := newHost(t)
		h.OutputCap = limit
		// 20000 numbered lines on stdout, a short line on stderr.
		in := agentInput(t, exampleYAML(t), `i=0; while [ $i -lt 20000 ]; do echo "line $i"; i=$((i+1)); done; echo END; echo oops >&2`)
		res := must[run.AgentResult](t, env, h.RunAgent, in)
		var want strings.Builder
		for i := range 20000 {
			fmt.Fprintf(&want, "line %d\n", i)
		}
		want.WriteString("END\n")
		stdout, _ := os.ReadFile(filepath.Join(in.Workspace.TrialDir, "stdout"))
		stderr, _ := os.ReadFile(filepath.Join(in.Workspace.TrialDir, "stderr"))
		if w := want.String(); string(stdout) != w[len(w)-limit:] {
			t.Errorf("stdout holds %d bytes ending %q, want the last %d of the output", len(stdout), stdout[max(0, len(stdout)-20):], limit)
		}
		if string(stderr) != "oops\n" {
			t.Errorf("stderr %q", stderr)
		}
		wantOut := &run.AgentOutput{Cap: limit, StdoutDropped: int64(want.Len() - limit)}
		if res.Output == nil || *res.Output != *wantOut {
			t.Errorf("result output %+v, want %+v", res.Output, wantOut)
		}
	})
	t.Run("nothing dropped", func(t *testing.T) {
		h, env := newHost(t)
		h.OutputCap = limit
		res := must[run.AgentResult](t, env, h.RunAgent, agentInput(t, exampleYAML(t), `echo hello`))
		if res.Output != nil {
			t.Errorf("result output %+v, want none", res.Output)
		}
	})
	t.Run("without end", func(t *testing.T) {
		h, env := newHost(t)
		h.OutputCap = limit
		in := agentInput(t, exampleYAML(t, "timeout: 60s", "timeout: 3s"), `yes "an agent that never stops talking" & yes "on stderr too" >&2`)
		res := must[run.AgentResult](t, env, h.RunAgent, in)
		if !res.TimedOut {
			t.Errorf("result %+v, want timed out", res)
		}
		for _, name := range []string{"stdout", "stderr"} {
			st, err := os.Stat(filepath.Join(in.Workspace.TrialDir, name))
			if err != nil || st.Size() != limit {
				t.Errorf("%s: %v, size %d, want the cap %d", name, err, st.Size(), limit)
			}
		}
		if res.Output == nil || res.Output.StdoutDropped <= 0 || res.Output.StderrDropped <= 0 || res.Output.Cap != limit {
			t.Errorf("result output %+v, want bytes dropped from both streams", res.Output)
		}
	})
}
