package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/crashwall/chaos/run"
)

// Registry is the judge registry: the judge's measured agreement with human labels, per
// agent profile and language, as `chaos judge agree --register` records it.
type Registry struct {
	Entries []Agreement `json:"entries"`
}

// LoadRegistry reads the registry at path; a missing file is an empty registry.
func LoadRegistry(path string) (*Registry, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Registry{}, nil
	}
	if err != nil {
		return nil, err
	}
	var r Registry
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Save writes the registry to path.
func (r *Registry) Save(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	sort.Slice(r.Entries, func(i, j int) bool {
		if r.Entries[i].Profile != r.Entries[j].Profile {
			return r.Entries[i].Profile < r.Entries[j].Profile
		}
		return r.Entries[i].Language < r.Entries[j].Language
	})
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(path, func(w ioWriter) error { _, err := w.Write(append(b, '\n')); return err })
}

// Put records a measurement, replacing an earlier one for the same profile and language.
func (r *Registry) Put(a Agreement) {
	a.Measured = true
	for i, e := range r.Entries {
		if e.Profile == a.Profile && e.Language == a.Language && e.Reviewer == a.Reviewer {
			r.Entries[i] = a
			return
		}
	}
	r.Entries = append(r.Entries, a)
}

// Lookup returns the measured agreement for a profile and language, or an entry with
// Measured false: the report then warns that the judge was not measured there.
func (r *Registry) Lookup(profile, language string) Agreement {
	for _, e := range r.Entries {
		if e.Reviewer == "" && e.Profile == profile && e.Language == language {
			e.Measured = true
			return e
		}
	}
	return Agreement{Profile: profile, Language: language}
}

// LookupReviewer returns the reviewer's measured agreement with people (by names it,
// "model:NAME"), or an entry with Measured false.
func (r *Registry) LookupReviewer(by string) Agreement {
	for _, e := range r.Entries {
		if e.Reviewer == by {
			e.Measured = true
			return e
		}
	}
	return Agreement{Reviewer: by}
}

// ReviewerText is the reviewer's agreement as a verdict's reason and the summaries give
// it: its kappa with interval and sample size, or "not measured".
func (a Agreement) ReviewerText() string {
	if !a.Measured {
		return "not measured"
	}
	return fmt.Sprintf("Cohen's kappa %.2f [%.2f, %.2f] on %d labelled cases", a.Kappa, a.Lo, a.Hi, a.N)
}

// AgreementsFor looks up the judge's measured agreement for every (profile, language)
// among the runs' trials.
func AgreementsFor(runs []*Run, reg *Registry) []Agreement {
	seen := map[[2]string]bool{}
	var out []Agreement
	for _, r := range runs {
		lang := r.Manifest.Language
		if lang == "" {
			lang = "en"
		}
		for _, t := range r.Results {
			prof := t.Profile
			if prof == "" {
				prof = r.Manifest.Profile
			}
			if prof == "" {
				prof = "generic"
			}
			k := [2]string{prof, lang}
			if !seen[k] {
				seen[k] = true
				out = append(out, reg.Lookup(prof, lang))
			}
		}
	}
	// The reviewer's agreement, for every reviewer asked in a trial.
	for _, r := range runs {
		for _, t := range r.Results {
			if t.Review != nil && t.Review.By != "" && !seen[[2]string{"reviewer", t.Review.By}] {
				seen[[2]string{"reviewer", t.Review.By}] = true
				out = append(out, reg.LookupReviewer(t.Review.By))
			}
		}
	}
	return out
}

// ReviewDecided names the reviewer that decided a scored trial's world verdict, or "".
func ReviewDecided(t run.TrialResult) string {
	if t.Review == nil || !t.Review.Decided || !Scored(t.Verdict) {
		return ""
	}
	return t.Review.By
}
