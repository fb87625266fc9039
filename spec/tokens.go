package spec

import (
	"fmt"
	"slices"
	"strings"
)

// tokenProblem is a {word} in an agent command that is not a token, at its byte offset.
type tokenProblem struct {
	Offset int
	Msg    string
}

// tokenProblems finds every {word} in command that is neither a token nor an axis name,
// and every token that stands where FillCommand fills no value (where the text is code
// for another program). A shell's ${VAR} is skipped, and JSON such as {"a": 1} never matches.
func tokenProblems(command string, axes []Axis) []tokenProblem {
	known := slices.Clone(CommandTokens)
	for _, a := range axes {
		known = append(known, a.Name)
	}
	var out []tokenProblem
	for _, loc := range tokenPattern.FindAllStringIndex(command, -1) {
		if loc[0] > 0 && command[loc[0]-1] == '$' {
			continue
		}
		word := command[loc[0]+1 : loc[1]-1]
		if slices.Contains(known, word) {
			continue
		}
		msg := fmt.Sprintf("unknown token {%s} (known: {%s})", word, strings.Join(known, "}, {"))
		if m, ok := closest(word, known); ok {
			msg = fmt.Sprintf("unknown token {%s} (did you mean {%s}?)", word, m)
		}
		out = append(out, tokenProblem{Offset: loc[0], Msg: msg})
	}
	_, where := FillCommand(command, func(name string) bool { return slices.Contains(known, name) })
	out = append(out, where...)
	slices.SortStableFunc(out, func(a, b tokenProblem) int { return a.Offset - b.Offset })
	return out
}

// CheckTokens reports the first {word} in an agent command that is neither a token nor
// an axis of s, as the loader does for agent.command.
func CheckTokens(command string, s *Spec) error {
	if ps := tokenProblems(command, s.Axes); len(ps) > 0 {
		return fmt.Errorf("%s", ps[0].Msg)
	}
	if s.Model.Upstream == "" && UsesToken(command, "llm_url") {
		return fmt.Errorf("{llm_url} needs model.upstream in the spec, the base URL the model proxy forwards to")
	}
	return nil
}

// ShellQuote makes v one literal word for a POSIX shell.
func ShellQuote(v string) string {
	if v != "" && strings.Trim(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=@,+%") == "" {
		return v
	}
	return "'" + strings.ReplaceAll(v, `'`, `'\''`) + "'"
}

// JoinCommand joins an argument list (an agent command given after --) into one command
// for `sh -c`. One argument is taken as a shell command line as it is (`-- 'cd x && agent
// {task}'`); several are words, each quoted so that it arrives as the same word
// (`-- claude -p {task}`). Tokens stay tokens either way: the harness fills them in
// wherever they stand, quoted or not.
func JoinCommand(argv []string) string {
	if len(argv) == 1 {
		return argv[0]
	}
	words := make([]string, len(argv))
	for i, a := range argv {
		words[i] = quoteWord(a)
	}
	return strings.Join(words, " ")
}

// quoteWord is ShellQuote for a word that may hold tokens: the text around them is
// quoted and the tokens stand bare (`--task={task}` -> `--task={task}`, `a b{task}` ->
// `'a b'{task}`), so that FillCommand makes each a reference to its value.
func quoteWord(a string) string {
	var b strings.Builder
	last := 0
	for _, loc := range tokenPattern.FindAllStringIndex(a, -1) {
		if loc[0] > 0 && a[loc[0]-1] == '$' {
			continue
		}
		if loc[0] > last {
			b.WriteString(ShellQuote(a[last:loc[0]]))
		}
		b.WriteString(a[loc[0]:loc[1]])
		last = loc[1]
	}
	if last < len(a) || last == 0 {
		b.WriteString(ShellQuote(a[last:]))
	}
	return b.String()
}
