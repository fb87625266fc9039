package spec

// FamilyCatalogue is what the loader asks of the tool fault families. The families are
// package faults's, which builds on this one: it registers its catalogue here from its
// init (RegisterFamilies), and the loader checks a spec's fault names, the tools they
// need and their variants against it. A program that loads specs without linking faults
// leaves the names unchecked until faults refuses them.
type FamilyCatalogue interface {
	// Families are the names of the tool families, in the catalogue's order.
	Families() []string
	// Needs is the effect a family's tool must have ("" : any).
	Needs(family string) Effect
	// Variants are the variants a condition of the family may name (nil: none).
	Variants(family string) []string
	// BrowserFamilies are the families the browser wall injects into a page's writes.
	BrowserFamilies() []string
}

var families FamilyCatalogue

// RegisterFamilies tells the loader which tool fault families exist.
func RegisterFamilies(c FamilyCatalogue) { families = c }

// The rest of this file is Ajantik's spelling of the families: its fault kinds and its
// auto_faults modules.

// AjantikFamily reports whether Ajantik's auto_faults has a module for the family (the
// others are chaos's own).
func AjantikFamily(family string) bool {
	for _, f := range ajantikModules {
		if f == family {
			return true
		}
	}
	return false
}

// ajantikKinds maps an Ajantik fault kind to a family and whether every call is hit.
var ajantikKinds = map[string]struct {
	Family string
	Every  bool
}{
	"none":            {"", false},
	"error_first":     {"transient_error", false},
	"error_always":    {"permanent_error", true},
	"malformed_first": {"truncated_reply", false},
	"replace":         {"data_anomaly", true},
	"phantom_first":   {"phantom_success", false},
	"phantom_always":  {"phantom_success", true},
	"empty_first":     {"premature_read", false},
	"session_drop":    {"session_drop", true},
}

// ajantikModules maps Ajantik's auto_faults module names (and its hyphenated ids) to families.
var ajantikModules = map[string]string{
	"transient_error": "transient_error", "transient-error": "transient_error",
	"permanent_error": "permanent_error", "permanent-error": "permanent_error",
	"truncated_reply": "truncated_reply", "truncated-reply": "truncated_reply",
	"phantom_success": "phantom_success", "phantom-success": "phantom_success",
	"premature_read": "premature_read", "premature-read": "premature_read",
	"session_drop": "session_drop", "session-drop": "session_drop",
	"data_anomaly": "data_anomaly",
}
