package probes

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// CommandCheck runs a checker program in dir and reads its report: a JSON object
// {"problems": [...]} on stdout; an empty list means the world is right. env is added to
// the probe's own environment. The exit status is not read when the report is there (a
// checker may exit 1 when it finds problems). A missing program, output that is not the
// report, or running past timeout give no verdict.
func CommandCheck(ctx context.Context, dir string, argv []string, env []string, timeout time.Duration) Result {
	if len(argv) == 0 {
		return noVerdict("command check: no command given")
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	killGroupOnCancel(cmd)
	// A grandchild that keeps the pipes open must not keep the probe waiting.
	cmd.WaitDelay = time.Second

	err := cmd.Run()
	if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return noVerdict("command check %s timed out after %s", argv[0], timeout)
		}
		return noVerdict("command check %s: %v", argv[0], ctx.Err())
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return noVerdict("command check: program %q not found", argv[0])
		}
		return noVerdict("command check %s could not run: %v", argv[0], err)
	}

	problems, perr := readProblems(stdout.Bytes())
	if perr != nil {
		why := perr.Error()
		if exitErr != nil {
			why = fmt.Sprintf("exited with status %d and %s", exitErr.ExitCode(), why)
		}
		if line := lastLine(stderr.String()); line != "" {
			why += " (stderr: " + line + ")"
		}
		return noVerdict("command check %s: %s", argv[0], why)
	}
	if len(problems) == 0 {
		return Result{OK: true, Detail: "no problems"}
	}
	noun := "problems"
	if len(problems) == 1 {
		noun = "problem"
	}
	return Result{Detail: fmt.Sprintf("%d %s: %s", len(problems), noun, strings.Join(problems, "; "))}
}

// readProblems reads the report from the whole output or, when the checker logged
// something first, from its last line.
func readProblems(out []byte) ([]string, error) {
	text := strings.TrimSpace(string(out))
	if text == "" {
		return nil, errors.New(`printed nothing, want {"problems": [...]}`)
	}
	var report struct {
		Problems *[]any `json:"problems"`
	}
	err := json.Unmarshal([]byte(text), &report)
	if err != nil {
		err = json.Unmarshal([]byte(lastLine(text)), &report)
	}
	if err != nil {
		return nil, fmt.Errorf(`printed something that is not JSON, want {"problems": [...]}: %q`, clip(lastLine(text), 120))
	}
	if report.Problems == nil {
		return nil, errors.New(`printed JSON without a "problems" list`)
	}
	var list []string
	for _, p := range *report.Problems {
		if s, ok := p.(string); ok {
			list = append(list, s)
			continue
		}
		list = append(list, show(p))
	}
	return list, nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
