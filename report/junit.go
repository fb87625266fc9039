package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"sort"
	"strings"
)

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// WriteJUnit writes JUnit XML for CI systems: a suite per arm, a test case per
// condition, failed where a silent wrong occurred, skipped where no trial was scored.
func WriteJUnit(w io.Writer, p *Page) error {
	out := junitSuites{Name: p.Title}
	for _, arm := range p.Matrix.Arms {
		s := junitSuite{Name: arm}
		for _, cond := range append(append([]string(nil), p.Matrix.Possible...), p.Matrix.Impossible...) {
			c := p.Matrix.Cells[cond][arm]
			if c == nil {
				continue
			}
			tc := junitCase{Name: cond, Classname: "chaos." + arm, SystemOut: cellLine(c)}
			switch {
			case c.SilentWrong.N == 0:
				tc.Skipped = &junitSkipped{Message: "no trial was scored: " + excluded(c)}
				s.Skipped++
			case c.SilentWrong.K > 0:
				var ids []string
				for _, k := range c.Trials {
					if t := trialByKey(p, k); t != nil && t.Verdict == SilentWrong {
						ids = append(ids, t.ID)
					}
				}
				sort.Strings(ids)
				tc.Failure = &junitFailure{
					Type:    "silent_wrong",
					Message: fmt.Sprintf("silent wrong in %s: the agent claimed success and the world was wrong", c.SilentWrong),
					Text:    "trials: " + strings.Join(ids, ", "),
				}
				s.Failures++
			}
			s.Tests++
			s.Cases = append(s.Cases, tc)
		}
		out.Tests += s.Tests
		out.Failures += s.Failures
		out.Skipped += s.Skipped
		out.Suites = append(out.Suites, s)
	}
	if len(p.Gates) > 0 {
		// Each gate on each cell and condition is a test case: failed only where the
		// evidence says the bar is broken.
		s := junitSuite{Name: "gates"}
		for _, g := range p.Gates {
			tc := junitCase{Name: g.Gate.Text + " " + g.Condition, Classname: "chaos.gates." + g.Cell, SystemOut: g.String()}
			if g.Call == "fail" {
				tc.Failure = &junitFailure{Type: "gate", Message: g.String()}
				s.Failures++
			}
			s.Tests++
			s.Cases = append(s.Cases, tc)
		}
		out.Tests += s.Tests
		out.Failures += s.Failures
		out.Suites = append(out.Suites, s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func cellLine(c *Cell) string {
	line := "silent wrong " + c.SilentWrong.String()
	if ex := excluded(c); ex != "" {
		line += "; left out: " + ex
	}
	return line
}

func excluded(c *Cell) string {
	var parts []string
	for _, k := range sortedKeys(c.Excluded) {
		parts = append(parts, fmt.Sprintf("%d %s", c.Excluded[k], k))
	}
	return strings.Join(parts, ", ")
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func trialByKey(p *Page, key string) *TrialView {
	for i := range p.Trials {
		if p.Trials[i].Key == key {
			return &p.Trials[i]
		}
	}
	return nil
}
