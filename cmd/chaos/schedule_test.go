package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
)

// TestScheduleCreateRefusesBadInput: what create can check itself is refused with exit 1
// before any server is reached.
func TestScheduleCreateRefusesBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"nightly", exampleSpec}, "give exactly one of --every DURATION and --cron EXPR"},
		{[]string{"nightly", exampleSpec, "--every", "1h", "--cron", "0 3 * * *"}, "give exactly one of --every DURATION and --cron EXPR"},
		{[]string{"night ly", exampleSpec, "--every", "1h"}, `schedule name "night ly"`},
		{[]string{"nightly", exampleSpec, "--every", "1h", "--webhook", "ftp://x"}, "--webhook: want an http:// or https:// URL"},
		{[]string{"nightly", exampleSpec, "--every", "1h", "--catchup-window", "1s"}, "Temporal's minimum is 10s"},
		{[]string{"nightly", exampleSpec, "--every", "1h", "--only", "no_such_condition"}, `--only "no_such_condition": no such condition`},
		{[]string{"nightly", "missing.yaml", "--every", "1h"}, "read the spec"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, err := chaosCmd(t, append([]string{"schedule", "create", "--data-dir", t.TempDir()}, tc.args...)...)
			if ExitCode(err) != ExitBadInput || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v (exit %d), want exit 1 with %q", err, ExitCode(err), tc.want)
			}
		})
	}
}

// TestCheckWebhook: a webhook given as ${VAR} is kept as the reference (checked when this
// process has the variable, a warning when it has not); a literal URL is kept with a
// warning that it is in plain text; no message shows the URL's secret part.
func TestCheckWebhook(t *testing.T) {
	env := map[string]string{
		"HOOK":      "https://hooks.example.com/services/T0-secret-token",
		"HOOK_PATH": "T0-secret-token",
		"NOT_A_URL": "ftp://hooks.example.com/T0-secret-token",
		"EMPTY":     "",
	}
	lookup := func(name string) (string, bool) { v, ok := env[name]; return v, ok }
	for _, tc := range []struct {
		raw, ref, host, warning, err string
	}{
		{raw: ""},
		{raw: "https://hooks.example.com/services/T0-secret-token", host: "https://hooks.example.com",
			warning: "--webhook: the URL is kept in the schedule's Temporal history in plain text; pass it as '${VAR}'"},
		{raw: "ftp://hooks.example.com/T0-secret-token", err: "--webhook: want an http:// or https:// URL"},
		{raw: "${HOOK}", ref: "${HOOK}"},
		{raw: "https://hooks.example.com/services/${HOOK_PATH}", ref: "https://hooks.example.com/services/${HOOK_PATH}"},
		{raw: "${UNSET_HOOK}", ref: "${UNSET_HOOK}",
			warning: "--webhook ${UNSET_HOOK}: the environment variable UNSET_HOOK is not set here; the worker expands it when it posts, so it must be set in the environment of chaos worker (or chaos server)"},
		{raw: "https://hooks.example.com/${UNSET_HOOK}", ref: "https://hooks.example.com/${UNSET_HOOK}", warning: "UNSET_HOOK is not set here"},
		{raw: "ftp://hooks.example.com/${UNSET_HOOK}", err: "--webhook ftp://hooks.example.com/${UNSET_HOOK}: want an http:// or https:// URL"},
		{raw: "${NOT_A_URL}", err: "--webhook ${NOT_A_URL}: its value here is not an http:// or https:// URL"},
		{raw: "${EMPTY}", err: "--webhook ${EMPTY}: its value here is not an http:// or https:// URL"},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			h, err := checkWebhook(tc.raw, lookup)
			if tc.err != "" {
				if ExitCode(err) != ExitBadInput || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v (exit %d), want exit 1 with %q", err, ExitCode(err), tc.err)
				}
				if strings.Contains(err.Error(), "secret-token") && !strings.Contains(tc.raw, "secret-token") {
					t.Errorf("error %q shows a variable's value", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if h.ref != tc.ref || h.host != tc.host {
				t.Errorf("kept ref %q, host %q; want %q, %q", h.ref, h.host, tc.ref, tc.host)
			}
			if (tc.warning == "") != (h.warning == "") || !strings.Contains(h.warning, tc.warning) || strings.Contains(h.warning, "secret-token") || strings.Contains(h.warning, "\n") {
				t.Errorf("warning %q, want one line with %q and no secret", h.warning, tc.warning)
			}
		})
	}
}

// TestScheduleCreateRefusesAWebhookVariableThatIsNoURL: the value is checked where it is
// set, and the message names the variable, not the value.
func TestScheduleCreateRefusesAWebhookVariableThatIsNoURL(t *testing.T) {
	t.Setenv("CHAOS_TEST_HOOK", "ftp://hooks.example.com/T0-secret-token")
	out, err := chaosCmd(t, "schedule", "create", "--data-dir", t.TempDir(), "nightly", exampleSpec, "--every", "1h", "--webhook", "${CHAOS_TEST_HOOK}")
	if ExitCode(err) != ExitBadInput || !strings.Contains(err.Error(), "--webhook ${CHAOS_TEST_HOOK}: its value here is not an http:// or https:// URL") {
		t.Errorf("error %v (exit %d), want exit 1 naming ${CHAOS_TEST_HOOK}", err, ExitCode(err))
	}
	if err != nil && strings.Contains(err.Error()+out, "secret-token") {
		t.Errorf("the value is shown: %v\n%s", err, out)
	}
}

// TestScheduleCreateWarnsOfTheWebhook: create goes through (on the embedded server) and
// says on stderr what becomes of the webhook: a ${VAR} this process lacks must be set on
// the worker; a literal URL is kept in plain text.
func TestScheduleCreateWarnsOfTheWebhook(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the embedded Temporal server")
	}
	t.Setenv("CHAOS_TEST_UNSET_HOOK", "")
	os.Unsetenv("CHAOS_TEST_UNSET_HOOK")
	data := t.TempDir()
	for _, tc := range []struct {
		name, webhook, stdout, warning string
	}{
		{"ref", "${CHAOS_TEST_UNSET_HOOK}", "webhook: ${CHAOS_TEST_UNSET_HOOK}, expanded from the worker's environment",
			"warning: --webhook ${CHAOS_TEST_UNSET_HOOK}: the environment variable CHAOS_TEST_UNSET_HOOK is not set here; the worker expands it when it posts"},
		{"literal", "http://127.0.0.1:1/hooks/T0-secret-token", "webhook: http://127.0.0.1:1/...",
			"warning: --webhook: the URL is kept in the schedule's Temporal history in plain text; pass it as '${VAR}'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			root := NewCmdRoot(&IOStreams{Out: &out, ErrOut: &errOut})
			root.SetArgs([]string{"schedule", "create", "--data-dir", data, "nightly-" + tc.name, exampleSpec, "--every", "24h", "--paused",
				"--out", t.TempDir(), "--webhook", tc.webhook})
			if err := root.Execute(); err != nil {
				t.Fatalf("create: %v\n%s%s", err, out.String(), errOut.String())
			}
			if !strings.Contains(out.String(), tc.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tc.stdout, out.String())
			}
			var warnings []string
			for _, line := range strings.Split(errOut.String(), "\n") {
				if strings.HasPrefix(line, "warning: ") {
					warnings = append(warnings, line)
				}
			}
			if len(warnings) != 1 || !strings.Contains(warnings[0], tc.warning) {
				t.Errorf("stderr warnings %q, want one with %q", warnings, tc.warning)
			}
			if strings.Contains(out.String()+errOut.String(), "secret-token") {
				t.Errorf("the webhook's path is shown:\n%s%s", out.String(), errOut.String())
			}
		})
	}
}

// TestDescribeScheduleNextRuns: the next run times show whenever the schedule is not
// paused, with or without a note (every pause and unpause leaves one).
func TestDescribeScheduleNextRuns(t *testing.T) {
	next := []time.Time{time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC), time.Date(2026, 12, 3, 3, 0, 0, 0, time.UTC)}
	tests := []struct {
		name   string
		state  *client.ScheduleState
		shown  int
		status string
	}{
		{"active", &client.ScheduleState{}, 2, "active"},
		{"unpaused, with a note", &client.ScheduleState{Note: "unpaused with chaos schedule unpause"}, 2, "active (unpaused with chaos schedule unpause)"},
		{"paused", &client.ScheduleState{Paused: true, Note: "paused with chaos schedule pause"}, 0, "paused (paused with chaos schedule pause)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			d := &client.ScheduleDescription{Schedule: client.Schedule{State: tc.state}, Info: client.ScheduleInfo{NextActionTimes: next}}
			describeSchedule(&out, "nightly", scheduleMemo{}, d)
			if got := strings.Count(out.String(), "\nnext       "); got != tc.shown {
				t.Errorf("%d next run lines, want %d:\n%s", got, tc.shown, out.String())
			}
			if !strings.Contains(out.String(), "\nstate      "+tc.status+"\n") {
				t.Errorf("no state line %q:\n%s", tc.status, out.String())
			}
		})
	}
}
