package spec

import (
	"strings"
	"testing"
)

func TestBrowserSection(t *testing.T) {
	const head = "name: b\ntask: t\nagent: {command: \"agent {cdp_url}\"}\n"
	ok, err := Parse("b.yaml", []byte(head+"browser:\n  intercept: [\"http://127.0.0.1:*/api/*\"]\n  deny_methods: [Runtime.evaluate, \"Page.*\"]\n  faults: [phantom_success]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if b := ok.Browser; b == nil || len(b.Intercept) != 1 || len(b.DenyMethods) != 2 || len(b.BrowserFaults()) != 1 || len(ok.Tools) != 0 {
		t.Fatalf("browser section read as %+v, tools %v", ok.Browser, ok.Tools)
	}
	for _, tc := range []struct{ name, yaml, want string }{
		{"no intercept", head + "browser: {deny_clicks: [x]}\n", "b.yaml:4: browser.intercept is required"},
		{"bad method", head + "browser: {intercept: [x], deny_methods: [evaluate]}\n", `"evaluate" is not a CDP method`},
		{"unknown fault", head + "browser: {intercept: [x], faults: [phantom_sucess]}\n", `"phantom_sucess" is not a fault of the browser wall`},
		{"remote browser", head + "browser: {intercept: [x], connect: \"http://10.0.0.5:9222\"}\n", "must be on loopback"},
		{"both", head + "browser: {intercept: [x], connect: \"http://127.0.0.1:9222\", chromium: c}\n", "not both"},
		{"cdp_url without browser", head + "tools: [{name: a, effect: none, reply: x}]\n", "{cdp_url} needs a browser: section"},
		{"tool named browser", head + "tools: [{name: browser, effect: none, reply: x}]\nbrowser: {intercept: [x]}\n", `a tool is named "browser"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("b.yaml", []byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
	g := CompileGlob("http://127.0.0.1:*/api/*")
	for s, want := range map[string]bool{"http://127.0.0.1:80/api/x": true, "http://127.0.0.1:80/apix": false, "https://127.0.0.1:80/api/x": false} {
		if g.Match(s) != want {
			t.Errorf("glob match %s: %v", s, !want)
		}
	}
}
