// Package within joins a name that comes from outside (a run id, a trial id, a skill's
// name, a cell or condition) under the folder it belongs in, and refuses one that would
// land anywhere else.
package within

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Name says what keeps name from being one file or folder name ("" when nothing does):
// it must not be empty, ".", "..", hold a path separator or a NUL, or be absolute.
func Name(name string) string {
	switch {
	case name == "":
		return "is empty"
	case name == "." || name == "..":
		return "is " + name + ", not a name"
	case strings.ContainsAny(name, `/\`):
		return `holds a / or \ (it must be one name, not a path)`
	case strings.IndexByte(name, 0) >= 0:
		return "holds a NUL byte"
	case !filepath.IsLocal(name) || filepath.Base(name) != name:
		return "is not a plain name on this system"
	}
	return ""
}

// Join is filepath.Join(root, rel...) when every part is a relative path (slashes
// allowed: a trial id is cell/condition/rep) that stays inside root, lexically: no part
// is empty, absolute, root itself or holds a NUL, and no .. climbs out. Anything else is an error
// naming the part.
func Join(root string, rel ...string) (string, error) {
	parts := []string{root}
	for _, r := range rel {
		p := filepath.FromSlash(r)
		switch {
		case r == "":
			return "", fmt.Errorf("an empty name cannot name a place under %s", root)
		case strings.IndexByte(r, 0) >= 0:
			return "", fmt.Errorf("%q holds a NUL byte and cannot name a place under %s", r, root)
		case filepath.IsAbs(p) || strings.HasPrefix(r, "/") || strings.HasPrefix(r, `\`):
			return "", fmt.Errorf("%q is an absolute path, not a name under %s", r, root)
		case !filepath.IsLocal(p):
			return "", fmt.Errorf("%q leaves %s", r, root)
		case filepath.Clean(p) == ".":
			return "", fmt.Errorf("%q names %s itself, not a place under it", r, root)
		}
		parts = append(parts, p)
	}
	out := filepath.Join(parts...)
	if rel, err := filepath.Rel(filepath.Clean(root), out); err != nil || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("%s is not under %s", out, root)
	}
	return out, nil
}
