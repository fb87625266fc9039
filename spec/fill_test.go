package spec

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// hostile is a value that tries every way a shell could be made to run it: a canary file
// is created if any part of it is ever parsed as shell code.
func hostile(canary string) string {
	return "Refund it; $(touch " + canary + ") `touch " + canary + "` ' \"$(touch " + canary + ")\" '\n" +
		"EOF\ntouch " + canary + " # \\ ${x:-$(touch " + canary + ")} $((1)) * ? [a] ~ !x &"
}

// fillAndRun fills template the way StartHub does, runs it the way RunAgent does (sh -c,
// the environment TokenEnv makes) in dir, and returns its stdout and the problems.
func fillAndRun(t testing.TB, template string, tokens map[string]string, dir string) (string, string) {
	t.Helper()
	cmd, probs := FillCommand(template, func(n string) bool { _, ok := tokens[n]; return ok })
	if len(probs) > 0 {
		return "", probs[0].Msg
	}
	c := exec.Command("sh", "-c", cmd)
	c.Dir = dir
	c.Env = append(os.Environ(), TokenEnv(tokens)...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Run(); err != nil {
		t.Fatalf("%s\n  filled: %s\n  %v: %s", template, cmd, err, errb.String())
	}
	return out.String(), ""
}

// TestFillCommandNeverRunsAValue: in every quoting context a shell has, a token's value
// either arrives byte for byte or the template is refused at plan time; no value is ever
// run, for {task}, {sandbox}, {spec} and an axis value alike.
func TestFillCommandNeverRunsAValue(t *testing.T) {
	accepted := []struct {
		name, template, want string // want: the output, with V for the value
		// inside: the token stands inside a larger word or a quoted string, which only a
		// token chaos makes may do; a text token ({task}, an axis) is refused there.
		inside bool
	}{
		{"bare", `printf '%s\n' {T}`, "V\n", false},
		{"double quotes", `printf '%s\n' "pre {T} post"`, "pre V post\n", true},
		{"single quotes, alone", `printf '%s\n' '{T}'`, "V\n", false},
		{"single quotes, glued", `printf '%s\n' 'a b'{T}`, "a bV\n", true},
		{"$() in double quotes", `printf '%s\n' "$(printf '%s' '{T}')"`, "V\n", false},
		{"$() bare", `printf '%s\n' "$(printf '%s.' {T})"`, "V.\n", false},
		{"backticks", "printf '%s\\n' \"`printf '%s.' {T}`\"", "V.\n", false},
		{"unquoted heredoc", "cat <<EOF\nit's {T}\nEOF", "it's V\n", true},
		{"heredoc, tab-stripped", "cat <<-EOF\n\t{T}\n\tEOF", "V\n", true},
		{"comment with an apostrophe before", "# it's {T} here\nprintf '%s\\n' {T}", "V\n", false},
		{"comment after, with an apostrophe", "printf '%s\\n' {T} # it's '{T}", "V\n", false},
		{"${x:-} bare", `printf '%s\n' ${x:-{T}}`, "V\n", true},
		{"${x:-} quoted", `printf '%s\n' "${x:-{T}}"`, "V\n", true},
		{"nested sh -c, value as an argument", `sh -c 'printf "%s\n" "$1"' sh {T}`, "V\n", false},
		{"nested sh -c, by its variable", `sh -c 'printf "%s\n" "$VAR"'`, "V\n", false},
		{"eval of the variable", `eval 'printf "%s\n" "$VAR"'`, "V\n", false},
		{"assignment", `x={T}; printf '%s\n' "$x"`, "V\n", true},
		{"case", `case {T} in *) printf '%s\n' matched;; esac`, "matched\n", false},
		{"option=", `printf '%s\n' --opt={T}`, "--opt=V\n", true},
		{"escaped quote before", `printf '%s\n' \'{T}`, "'V\n", true},
		{"subshell", `(printf '%s\n' {T})`, "V\n", false},
		{"pipe to a non-shell", `printf '%s\n' {T} | cat`, "V\n", false},
		{"double quotes, alone", `printf '%s\n' "{T}"`, "V\n", false},
		{"a program's argument, not its program", `awk 'BEGIN { print ARGV[1] }' {T}`, "V\n", false},
		{"sed's input, not its script", `printf '%s\n' {T} | sed -n p`, "V\n", false},
		{"a file named by it", `printf '%s\n' {T} >out; cat out`, "V\n", false},
	}
	refused := []struct {
		name, template, msg string
	}{
		{"nested sh -c in single quotes", `sh -c 'echo {T}'`, "beside other text inside '...'"},
		{"nested sh -c in double quotes", `sh -c "echo {T}"`, "would be run as code"},
		{"nested sh -c, the whole code", `bash -c '{T}'`, "would be run as code"},
		{"nested sh -lc through env", `env A=1 bash -lc "x {T}"`, "would be run as code"},
		{"nested sh -c through xargs", `xargs sh -c "{T}"`, "would be run as code"},
		{"nested sh -c in $()", `echo "$(sh -c "echo {T}")"`, "would be run as code"},
		{"$() inside sh -c's code", `sh -c "$(echo {T})"`, "would be run as code"},
		{"eval", `eval {T}`, "would be run as code"},
		{"eval in double quotes", `eval "echo {T}"`, "would be run as code"},
		{"source", `. {T}`, "would be run as code"},
		{"ssh", `ssh localhost echo {T}`, "would be run as code"},
		{"python -c", `python3 -c "print('{T}')"`, "would be run as code"},
		{"heredoc into sh", "sh <<EOF\necho {T}\nEOF", "where a shell or an interpreter reads its input"},
		{"heredoc piped into sh", "cat <<EOF | sh\necho {T}\nEOF", "where a shell or an interpreter reads its input"},
		{"pipe into sh", `echo {T} | sh`, "where a shell or an interpreter reads its input"},
		{"quoted heredoc", "cat <<'EOF'\n{T}\nEOF", "quoted heredoc"},
		{"arithmetic", `echo $(( {T} + 1 ))`, "arithmetic"},
		{"arithmetic command", `(( {T} ))`, "arithmetic"},
		{"array index", `echo ${a[{T}]}`, "arithmetic"},
		{"[[ ]]", `[[ {T} -eq 1 ]]`, "arithmetic"},
		{"let", `let x={T}`, "arithmetic"},
		{"ANSI-C quotes", `echo $'{T}'`, "$'...'"},
		{"beside text in single quotes", `echo 'task: {T}'`, "beside other text inside '...'"},
		{"name of a parameter", `echo ${{T}}`, "would be run as code"},
		// issue 28's nine: programs that run text the command hands them
		{"awk's program, in its text", `awk "BEGIN { system(\"echo {T}\") }"`, ""},
		{"awk's program, a whole word", `awk {T}`, "would be run as code"},
		{"sed's e, in its script", `sed "1e echo {T}" /dev/null`, ""},
		{"sed's script, after -e", `sed -n -e {T} /dev/null`, "would be run as code"},
		{"xargs into sh -c", `printf '%s' {T} | xargs sh -c`, "where a shell or an interpreter reads its input"},
		{"env -S", `env -S {T}`, "would be run as code"},
		{"env -S, in its string", `env -S "printf {T}"`, ""},
		{"a pipe into an interpreter", `printf '%s' {T} | python3`, "where a shell or an interpreter reads its input"},
		{"a pipe into . /dev/stdin", `printf '%s' {T} | . /dev/stdin`, "where a shell or an interpreter reads its input"},
	}
	for _, token := range []string{"task", "sandbox", "spec", "model"} {
		t.Run(token, func(t *testing.T) {
			for _, tt := range accepted {
				t.Run(tt.name, func(t *testing.T) {
					dir := t.TempDir()
					canary := filepath.Join(dir, "pwned")
					value := hostile(canary)
					tokens := map[string]string{"task": "t", "sandbox": dir, "spec": "s.yaml", "model": "m", token: value}
					template := strings.NewReplacer("{T}", "{"+token+"}", "VAR", TokenVar(token)).Replace(tt.template)
					got, problem := fillAndRun(t, template, tokens, dir)
					if tt.inside && IsTextToken(token) {
						if !strings.Contains(problem, "accepted only as a whole word") {
							t.Fatalf("%s: %q, want it refused: a text token inside a word", template, problem)
						}
						return
					}
					if problem != "" {
						t.Fatalf("%s refused: %s", template, problem)
					}
					if want := strings.ReplaceAll(tt.want, "V", value); got != want {
						t.Errorf("%s\n got %q\nwant %q", template, got, want)
					}
					if _, err := os.Stat(canary); err == nil {
						t.Errorf("%s ran the value: %s exists", template, canary)
					}
				})
			}
			for _, tt := range refused {
				t.Run(tt.name, func(t *testing.T) {
					template := strings.ReplaceAll(tt.template, "{T}", "{"+token+"}")
					_, probs := FillCommand(template, func(n string) bool { return n == token })
					// "": refused by the whole-word rule (a text token) or as code (any other)
					ok := len(probs) > 0 && (tt.msg != "" && strings.Contains(probs[0].Msg, tt.msg) || tt.msg == "" && !IsTextToken(token) || IsTextToken(token) && strings.Contains(probs[0].Msg, "accepted only as a whole word"))
					if !ok || !strings.HasPrefix(probs[0].Msg, "{"+token+"}") {
						t.Fatalf("%s: problems %v, want one with %q", template, probs, tt.msg)
					}
				})
			}
		})
	}
}

// FuzzFillCommand: a template made of shell fragments (quotes, substitutions, heredocs,
// comments, nested shells, eval) around tokens, and a value: the filled command either is
// refused or, run as the agent is, creates no canary; and where the template is a
// well-formed printf of the token, the value arrives byte for byte.
func FuzzFillCommand(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3}, "it's $(touch x)")
	f.Add([]byte{5, 9, 14, 7, 3}, "a`b`\"c\"\n")
	f.Add([]byte{12, 13, 1, 8}, "EOF\n'")
	fragments := []string{"{task}", "{model}", "'", `"`, " ", "\n", "#", "$(", ")", "`", "${x:-", "}", "\\", ";",
		"sh -c ", "eval ", "cat <<EOF\n", "\nEOF\n", "$((", "))", "printf '%s' ", "| sh", "<<'EOF'\n", "'{task}'", "x="}
	f.Fuzz(func(t *testing.T, picks []byte, value string) {
		if len(picks) > 24 || strings.ContainsRune(value, 0) || strings.Contains(value, "pwned") {
			return // the environment carries no NUL; the canary's name is the test's own
		}
		dir := t.TempDir()
		canary := filepath.Join(dir, "pwned")
		value += " $(touch " + canary + ") `touch " + canary + "` ';touch " + canary + ";' \"\n touch " + canary + "\n"
		tokens := map[string]string{"task": value, "model": value}
		// a well-formed printf of the value, first: its output is known
		var b strings.Builder
		b.WriteString("printf '%s|' {task} \"{task}\" '{task}'\n")
		for _, p := range picks {
			b.WriteString(fragments[int(p)%len(fragments)])
		}
		cmd, probs := FillCommand(b.String(), func(n string) bool { _, ok := tokens[n]; return ok })
		if len(probs) > 0 {
			return
		}
		if strings.Contains(cmd, "pwned") {
			t.Fatalf("the value is in the shell text: %q", cmd)
		}
		c := exec.Command("sh", "-c", cmd)
		c.Dir = dir
		c.Env = append(os.Environ(), TokenEnv(tokens)...)
		var out bytes.Buffer
		c.Stdout = &out
		_ = c.Run() // a broken template is the shell's error, not the property's
		if _, err := os.Stat(canary); err == nil {
			t.Fatalf("%q ran the value (filled %q)", b.String(), cmd)
		}
		if want := strings.Repeat(value+"|", 3); !strings.HasPrefix(out.String(), want) {
			t.Fatalf("%q: output %q, want it to start with %q", b.String(), out.String(), want)
		}
	})
}

// An agent command given as words after -- keeps every word, tokens filled in, whatever
// the words hold.
func TestJoinCommandWords(t *testing.T) {
	tokens := map[string]string{"task": hostile("/nonexistent/pwned"), "sandbox": "/tmp/s b"}
	argv := []string{"printf", `%s\n`, "{task}", "--sandbox={sandbox}", "a b{sandbox}", "", "${HOME}", "it's", "{sandbox}x{sandbox}"}
	want := []string{tokens["task"], "--sandbox=" + tokens["sandbox"], "a b" + tokens["sandbox"], "", "${HOME}", "it's", tokens["sandbox"] + "x" + tokens["sandbox"]}
	got, problem := fillAndRun(t, JoinCommand(argv), tokens, t.TempDir())
	if problem != "" {
		t.Fatalf("%s refused: %s", JoinCommand(argv), problem)
	}
	if got != strings.Join(want, "\n")+"\n" {
		t.Errorf("%s\n got %q\nwant %q", JoinCommand(argv), got, strings.Join(want, "\n")+"\n")
	}
}
