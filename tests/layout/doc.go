// Package layout holds the tests that keep the module's shape as STYLE.md and issue 14 ask:
// every package says in its doc comment what it is, and no file in cmd/ is over 250 lines.
package layout
