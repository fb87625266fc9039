package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// FaultsOptions are the inputs of `chaos faults`.
type FaultsOptions struct {
	IO   *IOStreams
	Spec string
	JSON bool
	// Model lists the model fault catalogue instead of a spec's conditions.
	Model bool
}

// NewCmdFaults builds `chaos faults SPEC`.
func NewCmdFaults(ios *IOStreams, runF func(*FaultsOptions) error) *cobra.Command {
	opts := &FaultsOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "faults (SPEC | --model)",
		Short: "List every condition a spec generates, or the model fault catalogue, with one line on what each does (runs nothing)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case opts.Model && len(args) > 0:
				return badInput(fmt.Errorf("give either SPEC or --model: the model catalogue is the same for every spec"))
			case !opts.Model && len(args) == 0:
				return badInput(fmt.Errorf("give a spec file (chaos faults SPEC), or --model for the model fault catalogue"))
			case len(args) == 1:
				opts.Spec = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return faultsRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the conditions as JSON, for scripts")
	cmd.Flags().BoolVar(&opts.Model, "model", false, "list the model fault catalogue (model.fault in a spec) instead")
	return cmd
}

// ConditionView is one condition as `chaos faults --json` prints it.
type ConditionView struct {
	faults.Condition
	faults.Info
}

func faultsRun(opts *FaultsOptions) error {
	if opts.Model {
		return modelFaultsRun(opts)
	}
	s, err := spec.Load(opts.Spec)
	if err != nil {
		return badInput(err)
	}
	s, classes, err := discoverClassified(s)
	if err != nil {
		return badInput(err)
	}
	conds, err := faults.Generate(s)
	if err != nil {
		return badInput(err)
	}
	if opts.JSON {
		views := make([]ConditionView, 0, len(conds))
		for _, c := range conds {
			views = append(views, ConditionView{c, faults.Describe(s, c)})
		}
		enc := json.NewEncoder(opts.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(views)
	}
	fmt.Fprintf(opts.IO.Out, "%s: %d conditions (clean and %d faults) over %d tools\n\n", s.Name, len(conds), len(conds)-1, len(s.Tools))
	tw := tabwriter.NewWriter(opts.IO.Out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CONDITION\tSUCCESS POSSIBLE\tWHAT IT DOES")
	for _, c := range conds {
		possible := "yes"
		if !c.SuccessPossible {
			possible = "no"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.ID, possible, c.What)
	}
	tw.Flush()
	var none []string
	for _, f := range faults.Families() {
		applies := false
		for _, c := range conds {
			if c.Family == f.Name() {
				applies = true
			}
		}
		if !applies {
			none = append(none, fmt.Sprintf("%s (needs %s)", f.Name(), f.Eligible()))
		}
	}
	if len(none) > 0 {
		fmt.Fprintf(opts.IO.Out, "\nNot applicable to this spec: %s\n", strings.Join(none, "; "))
	}
	printToolHints(opts.IO.Out, s)
	printModelArm(opts, s)
	printClassification(opts.IO.Out, classes)
	return nil
}

// printToolHints lists each tool with the MCP annotations the wall gives it
// (world.Annotations), which clients such as Codex gate their calls on.
func printToolHints(w io.Writer, s *spec.Spec) {
	fmt.Fprintln(w, "\nTools as the wall lists them (MCP annotations: from the effect, a real server, or the spec's annotations:):")
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tEFFECT\treadOnlyHint\tdestructiveHint\tidempotentHint\topenWorldHint")
	flag := func(p *bool) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprint(*p)
	}
	for _, t := range s.Tools {
		h := world.Annotations(t)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t.Name, t.Effect, flag(h.ReadOnly), flag(h.Destructive), flag(h.Idempotent), flag(h.OpenWorld))
	}
	tw.Flush()
}

// printModelArm says what the spec's model table injects in every trial, beside each
// condition (see docs/model.md).
func printModelArm(opts *FaultsOptions, s *spec.Spec) {
	if s.Model.Upstream == "" {
		return
	}
	m := s.Model
	if !m.Armed() {
		fmt.Fprintf(opts.IO.Out, "\nModel: the proxy at {llm_url} forwards to %s with no fault (a clean run)\n", m.Upstream)
		return
	}
	where := "every position"
	if len(m.Steps) > 0 {
		where = "positions " + strings.Join(m.Steps, ", ")
	}
	what := ""
	for _, f := range faults.ModelFaults() {
		if f.Name == m.FaultName() {
			what = f.What
		}
	}
	fmt.Fprintf(opts.IO.Out, "\nModel: in every trial, %s at rate %g at %s (%s), through the proxy at {llm_url} in front of %s\n",
		m.FaultName(), m.RateOrDefault(), where, what, m.Upstream)
}

// modelFaultsRun prints the model fault catalogue: one line each, or JSON.
func modelFaultsRun(opts *FaultsOptions) error {
	cat := faults.ModelFaults()
	if opts.JSON {
		enc := json.NewEncoder(opts.IO.Out)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		type view struct {
			Name string `json:"name"`
			What string `json:"what"`
		}
		views := make([]view, len(cat))
		for i, f := range cat {
			views[i] = view{f.Name, f.What}
		}
		return enc.Encode(views)
	}
	fmt.Fprintf(opts.IO.Out, "%d model faults (model.fault in a spec; each mutates one response at the eligible positions)\n\n", len(cat))
	tw := tabwriter.NewWriter(opts.IO.Out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FAULT\tWHAT THE AGENT RECEIVES")
	for _, f := range cat {
		fmt.Fprintf(tw, "%s\t%s\n", f.Name, f.What)
	}
	return tw.Flush()
}
