//go:build !noserver

package worker

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/crashwall/chaos/tests/fixture"
)

const testTaskQueue = "worker-test"

func greetWorkflow(ctx workflow.Context, name string) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var greeting string
	err := workflow.ExecuteActivity(ctx, greetActivity, name).Get(ctx, &greeting)
	return greeting, err
}

func greetActivity(ctx context.Context, name string) (string, error) {
	activity.GetLogger(ctx).Info("greeting", "name", name)
	return "hello " + name, nil
}

// TestServer runs a workflow on an embedded server, looks at it through the web UI,
// then restarts the server on the same data directory and finds the workflow again.
func TestServer(t *testing.T) {
	dataDir := t.TempDir()
	goroutinesBefore := runtime.NumGoroutine()

	first := startTestServer(t, ServerConfig{DataDir: dataDir, LogFile: dataDir + "/server.log"})
	if first.UIAddr() == "" {
		t.Fatal("UIAddr is empty with the UI enabled")
	}

	c := dialTestClient(t, first.FrontendAddr())
	w := sdkworker.New(c, testTaskQueue, sdkworker.Options{})
	w.RegisterWorkflow(greetWorkflow)
	w.RegisterActivity(greetActivity)
	if err := w.Start(); err != nil {
		t.Fatalf("start worker: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "greet-1", TaskQueue: testTaskQueue}, greetWorkflow, "chaos")
	if err != nil {
		t.Fatalf("start workflow: %v", err)
	}
	var got string
	if err := run.Get(ctx, &got); err != nil {
		t.Fatalf("workflow failed: %v", err)
	}
	if got != "hello chaos" {
		t.Fatalf("workflow result = %q, want %q", got, "hello chaos")
	}

	// The worker named its binary without reading it through MD5 (identifyBinary): its
	// workflow task completions carry BinaryID.
	t.Run("binary id", func(t *testing.T) {
		iter := c.GetWorkflowHistory(ctx, "greet-1", "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		seen := 0
		for iter.HasNext() {
			e, err := iter.Next()
			if err != nil {
				t.Fatal(err)
			}
			if a := e.GetWorkflowTaskCompletedEventAttributes(); a != nil {
				seen++
				if got := a.GetWorkerVersion().GetBuildId(); got != BinaryID() {
					t.Errorf("a workflow task completed by binary %q, want %q", got, BinaryID())
				}
			}
		}
		if seen == 0 {
			t.Fatal("no workflow task completed in greet-1's history")
		}
	})

	t.Run("ui page", func(t *testing.T) {
		status, body := httpGet(t, first.UIAddr()+"/")
		if status != http.StatusOK || !strings.Contains(strings.ToLower(body), "<html") {
			t.Fatalf("GET %s/ = %d, body starts %.200q; want 200 and HTML", first.UIAddr(), status, body)
		}
	})

	t.Run("ui lists workflow", func(t *testing.T) {
		// Visibility is written after the workflow closes, so wait for it to show.
		url := first.UIAddr() + "/api/v1/namespaces/default/workflows"
		var last string
		listed := fixture.Until(t, 0, func() bool {
			status, body := httpGet(t, url)
			last = body
			if status != http.StatusOK {
				return false
			}
			var list struct {
				Executions []struct {
					Execution struct{ WorkflowID string }
					Status    string
				}
			}
			if err := json.Unmarshal([]byte(body), &list); err != nil {
				t.Fatalf("GET %s: %v in %.300q", url, err, body)
			}
			for _, e := range list.Executions {
				if e.Execution.WorkflowID == "greet-1" && e.Status == "WORKFLOW_EXECUTION_STATUS_COMPLETED" {
					return true
				}
			}
			return false
		})
		if !listed {
			t.Fatalf("GET %s never listed greet-1 as completed; last body %.500q", url, last)
		}
	})

	w.Stop()
	c.Close()
	stopTestServer(t, first)
	for _, addr := range []string{first.FrontendAddr(), strings.TrimPrefix(first.UIAddr(), "http://")} {
		if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			conn.Close()
			t.Errorf("%s still accepts connections after Stop", addr)
		}
	}
	t.Logf("goroutines: %d before the first server, %d after its Stop", goroutinesBefore, runtime.NumGoroutine())

	t.Run("history survives a new process", func(t *testing.T) {
		// In this process the SQLite plugin keeps its connection open after Stop
		// (by design), so read the file from a fresh process too.
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperNewProcess$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), helperDataDirEnv+"="+dataDir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("helper process: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), "--- PASS: TestHelperNewProcess") {
			t.Fatalf("helper process did not run:\n%s", out)
		}
		for _, line := range strings.Split(string(out), "\n") {
			if strings.Contains(line, "StartServer took") {
				t.Logf("child process: %s", strings.TrimSpace(line))
			}
		}
	})

	// The same data directory, a new server without UI: the history is still there.
	second := startTestServer(t, ServerConfig{DataDir: dataDir, UIPort: NoUI})
	if second.UIAddr() != "" {
		t.Errorf("UIAddr = %q with the UI disabled, want empty", second.UIAddr())
	}
	if second.FrontendAddr() == first.FrontendAddr() {
		t.Logf("second server reuses frontend address %s", second.FrontendAddr())
	}
	c2 := dialTestClient(t, second.FrontendAddr())
	desc, err := c2.DescribeWorkflowExecution(ctx, "greet-1", "")
	if err != nil {
		t.Fatalf("describe greet-1 after restart: %v", err)
	}
	if s := desc.GetWorkflowExecutionInfo().GetStatus(); s != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		t.Fatalf("greet-1 status after restart = %v, want completed", s)
	}
	got = ""
	if err := c2.GetWorkflow(ctx, "greet-1", "").Get(ctx, &got); err != nil || got != "hello chaos" {
		t.Fatalf("greet-1 result after restart = %q, %v; want %q", got, err, "hello chaos")
	}

	t.Run("data dir in use", func(t *testing.T) {
		s, err := StartServer(context.Background(), ServerConfig{DataDir: dataDir, UIPort: NoUI})
		if err == nil {
			s.Stop()
			t.Fatal("a second server on a data directory in use started")
		}
		if !errors.Is(err, ErrDataDirInUse) {
			t.Fatalf("error = %v, want ErrDataDirInUse", err)
		}
	})
}

const helperDataDirEnv = "CHAOS_WORKER_TEST_DATA_DIR"

// TestHelperNewProcess is run by TestServer in a child process: it starts a server
// on TestServer's data directory and finds the workflow completed there.
func TestHelperNewProcess(t *testing.T) {
	dataDir := os.Getenv(helperDataDirEnv)
	if dataDir == "" {
		t.Skip("run by TestServer in a child process")
	}
	s := startTestServer(t, ServerConfig{DataDir: dataDir, UIPort: NoUI})
	c := dialTestClient(t, s.FrontendAddr())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	desc, err := c.DescribeWorkflowExecution(ctx, "greet-1", "")
	if err != nil {
		t.Fatalf("describe greet-1 in a new process: %v", err)
	}
	if st := desc.GetWorkflowExecutionInfo().GetStatus(); st != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		t.Fatalf("greet-1 status in a new process = %v, want completed", st)
	}
}

func TestStartServerRejectsBusyPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	tests := []struct {
		name string
		cfg  ServerConfig
	}{
		{"frontend", ServerConfig{Port: port, UIPort: NoUI}},
		{"ui", ServerConfig{UIPort: port}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.DataDir = t.TempDir()
			s, err := StartServer(context.Background(), tt.cfg)
			if err == nil {
				s.Stop()
				t.Fatalf("started on busy port %d", port)
			}
			if !strings.Contains(err.Error(), "not free") {
				t.Fatalf("error = %v, want one saying the port is not free", err)
			}
		})
	}
}

// startTestServer starts a server, logs how long that took, and stops it at cleanup.
func startTestServer(tb testing.TB, cfg ServerConfig) *Server {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	s, err := StartServer(ctx, cfg)
	if err != nil {
		tb.Fatalf("StartServer: %v", err)
	}
	tb.Logf("StartServer took %v (frontend %s, UI %q)", time.Since(start).Round(time.Millisecond), s.FrontendAddr(), s.UIAddr())
	tb.Cleanup(func() { stopTestServer(tb, s) })
	return s
}

func stopTestServer(tb testing.TB, s *Server) {
	tb.Helper()
	start := time.Now()
	if err := s.Stop(); err != nil {
		tb.Errorf("Stop: %v", err)
	}
	tb.Logf("Stop took %v", time.Since(start).Round(time.Millisecond))
}

func dialTestClient(tb testing.TB, addr string) client.Client {
	tb.Helper()
	c, err := client.Dial(client.Options{
		HostPort: addr,
		Logger:   sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)),
	})
	if err != nil {
		tb.Fatalf("dial %s: %v", addr, err)
	}
	tb.Cleanup(c.Close)
	return c
}

func httpGet(tb testing.TB, url string) (int, string) {
	tb.Helper()
	resp, err := http.Get(url)
	if err != nil {
		tb.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, string(body)
}
