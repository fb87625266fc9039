package cdpwall

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Chromium is a headless Chromium the trial started: a fresh profile, loopback only, its
// debugging port chosen by the browser and read from DevToolsActivePort.
type Chromium struct {
	// HTTP is the browser's own debugging address (http://127.0.0.1:PORT): only the guard
	// talks to it.
	HTTP string
	cmd  *exec.Cmd
	dir  string // the profile
	tmp  string // the browser's TMPDIR: inside dir, or a folder of its own
	once sync.Once
	exit chan struct{}
}

// chromiumFlags are the flags the trial's browser starts with (docs/browser.md).
var chromiumFlags = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
	"--disable-component-update", "--no-first-run", "--no-default-browser-check",
	"--disable-sync", "--disable-extensions", "--remote-debugging-address=127.0.0.1",
	"--remote-debugging-port=0",
}

// LaunchChromium starts bin ("" : chromium on PATH) with a fresh profile under tmp and
// waits until it names its debugging port. ctx bounds the wait; the browser outlives it
// and ends with Close.
func LaunchChromium(ctx context.Context, bin, tmp string) (*Chromium, error) {
	if bin == "" {
		bin = "chromium"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return nil, fmt.Errorf("the browser %q was not found: install chromium (apt-get install chromium) or name it in browser.chromium", bin)
	}
	dir, err := os.MkdirTemp(tmp, "chaos-chromium-")
	if err != nil {
		return nil, fmt.Errorf("make the browser's profile folder: %w", err)
	}
	// The browser's own temporary folder: Chromium puts its ProcessSingleton socket there
	// ($TMPDIR/org.chromium.Chromium.XXXXXX/SingletonSocket) and aborts at start (FATAL
	// "Socket path too long", then its zygotes' "write: Broken pipe") when that path
	// passes the 108 bytes of a unix socket's address. A test's or a user's TMPDIR can be
	// that long; so the browser gets one inside its profile when it is short enough (it
	// goes with the profile), else a short one of its own under /tmp.
	btmp, err := browserTmp(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	args := append(append([]string{}, chromiumFlags...), "--user-data-dir="+dir, "about:blank")
	cmd := exec.Command(path, args...)
	cmd.Env = withTMPDIR(os.Environ(), btmp)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stderr := &limited{buf: &bytes.Buffer{}, max: 64 << 10}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		os.RemoveAll(btmp)
		return nil, fmt.Errorf("start the browser: %w", err)
	}
	c := &Chromium{cmd: cmd, dir: dir, tmp: btmp, exit: make(chan struct{})}
	go func() { cmd.Wait(); close(c.exit) }()
	port, err := c.waitPort(ctx)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("the browser did not open its debugging port: %w (stderr: %s)", err, lastLines(stderr.String(), 3))
	}
	c.HTTP = "http://127.0.0.1:" + strconv.Itoa(port)
	return c, nil
}

// singletonSocket is what Chromium appends to its TMPDIR for its ProcessSingleton socket.
const singletonSocket = "/org.chromium.Chromium.XXXXXX/SingletonSocket"

// maxSocketPath is the longest path a unix socket's address holds (sun_path less its NUL).
const maxSocketPath = 107

// browserTmp makes the browser's TMPDIR: profile/tmp when the singleton socket's path fits
// in a socket address, else a fresh folder under /tmp.
func browserTmp(profile string) (string, error) {
	dir := filepath.Join(profile, "tmp")
	if len(dir)+len(singletonSocket) <= maxSocketPath {
		if err := os.Mkdir(dir, 0o700); err != nil {
			return "", fmt.Errorf("make the browser's temporary folder: %w", err)
		}
		return dir, nil
	}
	dir, err := os.MkdirTemp("/tmp", "chaos-chromium-")
	if err != nil {
		return "", fmt.Errorf("make the browser's temporary folder (the profile %s is too deep for the socket Chromium makes in its TMPDIR): %w", profile, err)
	}
	return dir, nil
}

// withTMPDIR is env with TMPDIR set to dir (and no other TMPDIR).
func withTMPDIR(env []string, dir string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "TMPDIR=") {
			out = append(out, kv)
		}
	}
	return append(out, "TMPDIR="+dir)
}

func (c *Chromium) waitPort(ctx context.Context) (int, error) {
	file := filepath.Join(c.dir, "DevToolsActivePort")
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if b, err := os.ReadFile(file); err == nil {
			first, _, ok := strings.Cut(string(b), "\n")
			if ok {
				if p, err := strconv.Atoi(strings.TrimSpace(first)); err == nil && p > 0 {
					return p, nil
				}
			}
		}
		select {
		case <-c.exit:
			return 0, fmt.Errorf("it exited (%s)", c.cmd.ProcessState)
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-tick.C:
		}
	}
}

// Pid is the browser's process id (its process group's too).
func (c *Chromium) Pid() int { return c.cmd.Process.Pid }

// Exited is closed when the browser's main process has ended.
func (c *Chromium) Exited() <-chan struct{} { return c.exit }

// Close kills the browser's process group, waits for it and removes its profile.
func (c *Chromium) Close() error {
	c.once.Do(func() {
		syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		<-c.exit
		os.RemoveAll(c.dir)
		os.RemoveAll(c.tmp)
	})
	return nil
}

// browserWS is the browser endpoint's WebSocket URL, read from base/json/version.
func browserWS(ctx context.Context, base string) (string, error) {
	var v struct {
		WS string `json:"webSocketDebuggerUrl"`
	}
	if err := getJSON(ctx, base+"/json/version", &v); err != nil {
		return "", err
	}
	if v.WS == "" {
		return "", errors.New("the browser's /json/version names no webSocketDebuggerUrl")
	}
	return v.WS, nil
}

func getJSON(ctx context.Context, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := loopbackClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return json.NewDecoder(http.MaxBytesReader(nil, resp.Body, 8<<20)).Decode(v)
}

// loopbackClient never uses a proxy from the environment: the browser is on loopback.
var loopbackClient = &http.Client{Transport: &http.Transport{Proxy: nil}}

type limited struct {
	mu  sync.Mutex
	buf *bytes.Buffer
	max int
}

func (l *limited) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := l.max - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (l *limited) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// lastLines is the last n lines of s, after its FATAL lines (the reason Chromium aborted,
// which the zygotes' lines after it would push out).
func lastLines(s string, n int) string {
	all := strings.Split(strings.TrimSpace(s), "\n")
	tail := all[max(len(all)-n, 0):]
	var out []string
	for _, l := range all[:len(all)-len(tail)] {
		if strings.Contains(l, ":FATAL:") {
			out = append(out, l)
		}
	}
	return strings.Join(append(out, tail...), " | ")
}
