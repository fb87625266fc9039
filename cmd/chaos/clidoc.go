package main

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

//go:generate go test -run ^TestCLIDoc$ -update .

// cliDocMarker separates docs/cli.md's hand-written part from the reference below it,
// which cliReference writes from the commands themselves (go generate ./cmd/chaos), so
// the page cannot leave a command out or tell a flag wrong; a test fails when it is stale.
const cliDocMarker = "<!-- Generated from the commands by `go generate ./cmd/chaos`; do not edit below. -->\n"

// The overview table sits between these two markers, generated like the reference.
const (
	overviewStart = "<!-- The overview is generated from the commands (cliOverview, overviewNotes); do not edit it here. -->\n"
	overviewEnd   = "<!-- End of the overview. -->\n"
)

// cliOverview is the table of every visible command: its usage as cobra gives it (linked
// to its section of the reference) and its note (overviewNotes), else its Short line. It
// fails on a note whose command does not exist.
func cliOverview(root *cobra.Command) (string, error) {
	root.InitDefaultCompletionCmd()
	var b strings.Builder
	b.WriteString("| command | what it does |\n|---|---|\n")
	seen := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.IsAvailableCommand() || c.IsAdditionalHelpTopicCommand() {
			return
		}
		if c != root {
			path := strings.TrimPrefix(c.CommandPath(), root.Name()+" ")
			seen[path] = true
			use := c.CommandPath() + strings.TrimPrefix(c.Use, c.Name())
			anchor := "#" + strings.ReplaceAll(c.CommandPath(), " ", "-")
			text := c.Short
			if n := overviewNotes[path]; n != "" {
				text = n // the note says what the Short line says, and more
			}
			fmt.Fprintf(&b, "| [`%s`](%s) | %s |\n", strings.ReplaceAll(use, "|", "\\|"), anchor, text)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	for path := range overviewNotes {
		if !seen[path] {
			return "", fmt.Errorf("overviewNotes has a note for chaos %s, which is no command", path)
		}
	}
	return b.String(), nil
}

// cliReference is every visible command's usage, flags and subcommands as Markdown, one
// section per command ("## chaos run"), linked to each other within the page.
func cliReference(root *cobra.Command) (string, error) {
	var b bytes.Buffer
	b.WriteString("\n# Reference\n\n")
	link := func(file string) string { // chaos_schedule_create.md -> #chaos-schedule-create
		return "#" + strings.ReplaceAll(strings.TrimSuffix(file, ".md"), "_", "-")
	}
	root.InitDefaultCompletionCmd() // cobra adds it only when the command runs
	var walk func(c *cobra.Command) error
	walk = func(c *cobra.Command) error {
		if !c.IsAvailableCommand() || c.IsAdditionalHelpTopicCommand() {
			return nil
		}
		c.DisableAutoGenTag = true
		var one bytes.Buffer
		if err := doc.GenMarkdownCustom(c, &one, link); err != nil {
			return err
		}
		b.WriteString("\n" + one.String())
		for _, sub := range c.Commands() {
			if err := walk(sub); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root); err != nil {
		return "", err
	}
	return b.String(), nil
}
