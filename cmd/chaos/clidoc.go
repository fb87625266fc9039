package main

import (
	"bytes"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

//go:generate go test -run ^TestCLIDoc$ -update .

// cliDocMarker separates docs/cli.md's hand-written part from the reference below it,
// which cliReference writes from the commands themselves (go generate ./cmd/chaos), so
// the page cannot leave a command out or tell a flag wrong; a test fails when it is stale.
const cliDocMarker = "<!-- Generated from the commands by `go generate ./cmd/chaos`; do not edit below. -->\n"

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
