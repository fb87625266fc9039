package trial

import (
	"context"
	"errors"
	"os"
	"strings"
	"time"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/proxies/cdpwall"
	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/spec"
)

// liveBrowser is a trial's browser wall: the CDP guard and, unless the spec names a
// browser the user started, the headless Chromium the trial started behind it.
type liveBrowser struct {
	guard  *cdpwall.Guard
	chrome *cdpwall.Chromium // nil for browser.connect
}

// browserStart bounds the browser's start: a guard against a hang, not a measure of
// speed (a starved machine starts Chromium in tens of seconds).
const browserStart = 5 * time.Minute

// startBrowser starts the spec's browser (or reaches browser.connect) and the guard in
// front of it. When the guard loses the browser it ends the browser it started, so that
// nothing runs on unguarded (fail closed).
func startBrowser(ctx context.Context, s *spec.Spec, h *hub.Hub, cond faults.Condition, seed int64, tmp string) (*liveBrowser, error) {
	ctx, cancel := context.WithTimeout(ctx, browserStart)
	defer cancel()
	lb := &liveBrowser{}
	addr := s.Browser.Connect
	if addr == "" {
		if err := os.MkdirAll(tmp, 0o700); err != nil {
			return nil, err
		}
		c, err := cdpwall.LaunchChromium(ctx, s.Browser.Chromium, tmp)
		if err != nil {
			return nil, err
		}
		lb.chrome, addr = c, c.HTTP
	}
	g, err := cdpwall.Start(ctx, cdpwall.Config{
		Hub: h, Browser: strings.TrimRight(addr, "/"), Rules: s.Browser, Condition: cond, Seed: seed,
		OnLost: func(string) {
			if lb.chrome != nil {
				lb.chrome.Close()
			}
		},
	})
	if err != nil {
		lb.Close()
		return nil, err
	}
	lb.guard = g
	return lb, nil
}

// Close ends the guard first (so that the browser's end is not a loss), then the browser.
func (lb *liveBrowser) Close() error {
	var errs []error
	if lb.guard != nil {
		errs = append(errs, lb.guard.Close())
	}
	if lb.chrome != nil {
		errs = append(errs, lb.chrome.Close())
	}
	return errors.Join(errs...)
}

// browserEvidence is the browser guard's evidence, read from the record: a trial whose
// guard lost the browser has no verdict.
type browserEvidence struct{}

func (browserEvidence) part() string { return "browser guard" }

func (browserEvidence) ending(v *verification) {
	if why := guardLost(v.log); why != "" {
		v.noVerdict(why)
	}
}

// guardLost is the record's guard_lost reason ("" : the guard never lost the browser).
// Such a trial has no verdict: what the agent did after it went unwatched.
func guardLost(log *record.Log) string {
	if log == nil {
		return ""
	}
	for _, r := range log.Rows {
		if r.Type == record.TypeError && r.Transport == cdpwall.Transport && strings.HasPrefix(r.Reason, cdpwall.GuardLost) {
			return r.Reason
		}
	}
	return ""
}

var errBrowserInContainer = errors.New("a spec with a browser: section runs its agent as a process: the browser and its guard are on the host's loopback, which a container (agent.runtime: docker) cannot reach")

func browserProblem(s *spec.Spec) error {
	if s.Browser != nil && s.Agent.IsDocker() {
		return errBrowserInContainer
	}
	return nil
}
