package spec

// The tool fault families, by the names a spec uses. Package faults implements each one;
// a test there checks that every name here has an implementation and no more.
var ToolFamilies = []string{
	"phantom_success",
	"phantom_failure",
	"transient_error",
	"permanent_error",
	"session_drop",
	"truncated_reply",
	"premature_read",
	"stale_read",
	"data_anomaly",
	"context_switch",
	"empty_success",
}

// AnomalyVariants are the kinds of data anomaly, derived from a tool's reply.
var AnomalyVariants = []string{
	"cancelled_record",
	"duplicate_record",
	"mixed_units",
	"missing_field",
	"stale_date",
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
