package main

import (
	"github.com/spf13/cobra"
)

// NewCmdJudge builds `chaos judge`: measuring the claim judge against human labels.
func NewCmdJudge(ios *IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "judge",
		Short: "Measure the claim judge against a person's labels",
		Long: `The claim behind every verdict is read by a judge. To know how far to trust it, a
person labels a blind sample of closing messages and chaos computes the agreement:

  chaos judge sample RUN_FOLDER --out form.csv     write a blind, shuffled form
  (fill in the label column: claimed, not claimed or unsure)
  chaos judge agree form.csv --agent claude-code --language en --register

Every report then states the measured agreement for its agent and language, or warns
that the judge was not measured there.

The reviewer model (model.reviewer) is measured the same way: a person reads the cases
it was asked about, blind to its answers, and says whether the world is right:

  chaos judge sample RUN_FOLDER --reviewer --out cases.csv
  (fill in the label column: right, wrong or unsure)
  chaos judge agree cases.csv --register

Every rate whose verdicts the reviewer decided then shows its agreement beside it (the
console, summary.txt, chaos show, report.html), or "not measured".`,
	}
	cmd.AddCommand(newCmdJudgeSample(ios), newCmdJudgeAgree(ios))
	return cmd
}

type judgeKey struct {
	Run   string            `json:"run"`
	Items map[string]string `json:"items"` // form id -> trial id
	// Reviewer names the reviewer ("model:NAME") when the form holds the reviewer's cases
	// (judge sample --reviewer), not closing messages.
	Reviewer string `json:"reviewer,omitempty"`
}

// JudgeSampleOptions are the inputs of `chaos judge sample`.
type JudgeSampleOptions struct {
	IO   *IOStreams
	Run  string
	Out  string
	N    int
	Seed uint64
	// Reviewer samples the reviewer's cases instead of closing messages.
	Reviewer bool
}

func newCmdJudgeSample(ios *IOStreams) *cobra.Command {
	opts := &JudgeSampleOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "sample RUN_FOLDER --out FORM.csv [--n 60]",
		Short: "Write a blind labelling form: closing messages, shuffled, with no verdicts",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Run = args[0]
			if opts.Reviewer {
				return reviewerSample(opts) // judge_reviewer.go
			}
			return judgeSample(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Out, "out", "", "the form to write (CSV); its key goes beside it as FORM.key.json")
	cmd.Flags().IntVar(&opts.N, "n", 60, "how many messages (0: all)")
	cmd.Flags().Uint64Var(&opts.Seed, "seed", 1, "shuffle seed")
	cmd.Flags().BoolVar(&opts.Reviewer, "reviewer", false, "sample the reviewer model's cases (label: right, wrong or unsure) instead of closing messages")
	return cmd
}

// JudgeAgreeOptions are the inputs of `chaos judge agree`.
type JudgeAgreeOptions struct {
	IO       *IOStreams
	Form     string
	Agent    string
	Language string
	Register bool
	Registry string
	DataDir  string
}

func newCmdJudgeAgree(ios *IOStreams) *cobra.Command {
	opts := &JudgeAgreeOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "agree FORM.csv [--agent PROFILE --language LANG] [--register]",
		Short: "Compute the judge's (or the reviewer's) agreement with a labelled form (Cohen's kappa, its interval, the direction matrix)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Form = args[0]
			return judgeAgree(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Agent, "agent", "", "the agent profile whose messages were labelled (claude-code, codex, goose, generic, scripted)")
	cmd.Flags().StringVar(&opts.Language, "language", "", "the language of the messages (en, tr, ...)")
	cmd.Flags().BoolVar(&opts.Register, "register", false, "record the result in the judge registry")
	cmd.Flags().StringVar(&opts.Registry, "registry", "", "judge registry (default <data dir>/judges.json)")
	cmd.Flags().StringVar(&opts.DataDir, "data-dir", "", "data directory (default $XDG_DATA_HOME/chaos)")
	return cmd
}
