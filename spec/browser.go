package spec

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// BrowserTool is the name the browser wall's writes go by in conditions
// ("phantom_success@browser") and in the record's rows: the page's writes are one
// pseudo-tool, counted in the order the browser sends them.
const BrowserTool = "browser"

// Browser is the spec's `browser:` section: a Chromium behind the CDP guard
// (proxies/cdpwall), the agent reaching it through {cdp_url}. Patterns are globs over the
// whole URL, `*` matching any run of characters.
type Browser struct {
	// Intercept are the URLs whose requests are recorded and whose writes the faults hit.
	Intercept []string `json:"intercept"`
	// AllowWrites are the URLs a write (any method but GET, HEAD, OPTIONS) may go to;
	// every other write is denied. Empty: the intercepted URLs.
	AllowWrites []string `json:"allow_writes,omitempty"`
	// DenyMethods are CDP methods the agent may not call ("Runtime.evaluate", "Network.*").
	DenyMethods []string `json:"deny_methods,omitempty"`
	// DenyClicks are globs over the label of an element a mouse press lands on.
	DenyClicks []string `json:"deny_clicks,omitempty"`
	// SecretURLs are URLs whose request and response bodies are recorded only as lengths.
	SecretURLs []string `json:"secret_urls,omitempty"`
	// Faults are the families to generate on the page's writes (empty: every family in
	// the browser families of the FamilyCatalogue).
	Faults []string `json:"faults,omitempty"`
	// Chromium is the browser binary the trial starts ("" : chromium on PATH).
	Chromium string `json:"chromium,omitempty"`
	// Connect is a browser the user started (its http://HOST:PORT debugging address) to
	// guard instead of starting one; loopback only.
	Connect string `json:"connect,omitempty"`
}

// BrowserFaults are the families the browser section asks for.
func (b *Browser) BrowserFaults() []string {
	if b == nil {
		return nil
	}
	if len(b.Faults) == 0 {
		return browserFamilies()
	}
	return b.Faults
}

var browserKeys = []string{"intercept", "allow_writes", "deny_methods", "deny_clicks", "secret_urls", "faults", "chromium", "connect"}

// browser reads the `browser:` section (nil when absent).
func (d *decoder) browser(n *yaml.Node, tools []Tool) *Browser {
	if isNull(deref(n)) {
		return nil
	}
	f := d.fields(n, "browser", browserKeys, map[string]string{
		"urls": "intercept", "patterns": "intercept", "deny_writes": "allow_writes", "secrets": "secret_urls",
	})
	b := &Browser{
		Intercept:   d.globs(f["intercept"], "browser.intercept"),
		AllowWrites: d.globs(f["allow_writes"], "browser.allow_writes"),
		DenyMethods: d.texts(f["deny_methods"], "browser.deny_methods", true),
		DenyClicks:  d.globs(f["deny_clicks"], "browser.deny_clicks"),
		SecretURLs:  d.globs(f["secret_urls"], "browser.secret_urls"),
		Chromium:    d.text(f["chromium"], "browser.chromium"),
		Connect:     d.text(f["connect"], "browser.connect"),
	}
	if len(b.Intercept) == 0 {
		d.errorf(d.keyOf(n), "browser.intercept is required: the URL patterns of the site whose writes the wall records and faults (e.g. http://127.0.0.1:*/api/*)")
	}
	for _, m := range b.DenyMethods {
		if !cdpMethod.MatchString(m) {
			d.errorf(f["deny_methods"], "browser.deny_methods: %q is not a CDP method (Domain.method, or Domain.* for a whole domain)", m)
		}
	}
	for _, item := range d.textNodes(f["faults"], "browser.faults", true) {
		if known := browserFamilies(); families != nil && !slices.Contains(known, item.Value) {
			d.errorf(item, "browser.faults: %q is not a fault of the browser wall%s (known: %s)", item.Value, suggest(item.Value, known), strings.Join(known, ", "))
			continue
		}
		if slices.Contains(b.Faults, item.Value) {
			d.errorf(item, "browser.faults lists %q twice", item.Value)
			continue
		}
		b.Faults = append(b.Faults, item.Value)
	}
	if b.Connect != "" {
		if err := loopbackHTTP(b.Connect); err != nil {
			d.errorf(f["connect"], "browser.connect %q: %v", b.Connect, err)
		}
	}
	if b.Chromium != "" && b.Connect != "" {
		d.errorf(f["connect"], "browser: give chromium (a browser the trial starts) or connect (one you started), not both")
	}
	for _, t := range tools {
		if t.Name == BrowserTool {
			d.errorf(d.keyOf(n), "a tool is named %q, which is the browser wall's name in conditions: rename the tool", BrowserTool)
		}
	}
	return b
}

// browserFamilies are the families the browser wall injects (FamilyCatalogue).
func browserFamilies() []string {
	if families == nil {
		return nil
	}
	return families.BrowserFamilies()
}

var cdpMethod = regexp.MustCompile(`^[A-Z][A-Za-z]*\.(\*|[a-z][A-Za-z]*)$`)

// globs reads a list of URL or label globs (one text is a list of one).
func (d *decoder) globs(n *yaml.Node, what string) []string {
	var out []string
	for _, item := range d.textNodes(n, what, true) {
		if strings.TrimSpace(item.Value) == "" {
			d.errorf(item, "%s: a pattern is empty", what)
			continue
		}
		out = append(out, item.Value)
	}
	return out
}

func loopbackHTTP(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return fmt.Errorf("want http://127.0.0.1:PORT, the browser's remote debugging address")
	}
	switch u.Hostname() {
	case "127.0.0.1", "localhost", "::1":
		return nil
	}
	if strings.HasPrefix(u.Hostname(), "127.") {
		return nil
	}
	return fmt.Errorf("the browser must be on loopback (127.0.0.0/8 or ::1), got %s", u.Hostname())
}

// Glob is a compiled URL or label pattern: `*` matches any run of characters, everything
// else itself, the whole text.
type Glob struct{ re *regexp.Regexp }

// CompileGlob compiles a pattern written in a browser section.
func CompileGlob(p string) Glob {
	parts := strings.Split(p, "*")
	for i := range parts {
		parts[i] = regexp.QuoteMeta(parts[i])
	}
	return Glob{re: regexp.MustCompile(`(?s)^` + strings.Join(parts, ".*") + `$`)}
}

// Match reports whether s matches the pattern.
func (g Glob) Match(s string) bool { return g.re != nil && g.re.MatchString(s) }

// MatchAny reports whether s matches any of the patterns.
func MatchAny(globs []Glob, s string) bool {
	for _, g := range globs {
		if g.Match(s) {
			return true
		}
	}
	return false
}

// CompileGlobs compiles every pattern.
func CompileGlobs(ps []string) []Glob {
	out := make([]Glob, len(ps))
	for i, p := range ps {
		out[i] = CompileGlob(p)
	}
	return out
}
