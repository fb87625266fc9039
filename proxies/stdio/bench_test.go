package stdio_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/proxies/internal/walltest"
	"github.com/crashwall/chaos/proxies/stdio"
	"github.com/crashwall/chaos/record"
)

// BenchmarkStdioWall is the standalone stdio wall's own work per tools/call (what
// `chaos wall --spec` does between reading a request and writing its answer), in
// process, over OS pipes, recording to a file as the wall does: the place to profile it
// (-cpuprofile). ns/op is one call's round trip; added-µs/call and x-baseline compare it
// with the same number of Hub.Call calls measured right after (walltest.ReportOverhead).
func BenchmarkStdioWall(b *testing.B) {
	rec, err := record.Open(filepath.Join(b.TempDir(), "record.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	h := walltest.NewHub(b, faults.CleanID, rec)
	inR, inW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- stdio.ServeStdio(context.Background(), h, inR, outW) }()
	lines := bufio.NewReader(outR)
	exchange := func(msg string) string {
		if _, err := io.WriteString(inW, msg+"\n"); err != nil {
			b.Fatal(err)
		}
		line, err := lines.ReadString('\n')
		if err != nil {
			b.Fatal(err)
		}
		return line
	}
	exchange(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"b","version":"0"}}}`)
	io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	i := 0
	var times []time.Duration
	for b.Loop() {
		i++
		t0 := time.Now()
		resp := exchange(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"update_ticket","arguments":{"field":"priority","value":"v%d"}}}`, i, i%2))
		if !strings.Contains(resp, "updated") {
			b.Fatalf("answer %s", resp)
		}
		times = append(times, time.Since(t0))
	}
	inW.Close()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	outW.Close()
	walltest.ReportOverhead(b, []byte(`{"field":"priority","value":"v1"}`), times)
}
