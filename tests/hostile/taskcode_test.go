package hostile_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/tests/testkit"
)

// TestHostileTaskAsCode (issue 28 item 8): the contexts the load-time check once missed,
// each written as an attacker would, with a task that creates the canary if any of it
// runs. Every one is refused when the spec loads (exit 1, the spec's line), because a
// text token stands only as a whole word, and a whole word is refused where the command
// hands it to something that runs it.
func TestHostileTaskAsCode(t *testing.T) {
	t.Parallel()
	const word = "{task} stands inside a larger word or a quoted string here"
	tests := []struct{ name, command, want string }{
		{"awk's program, in its text", `awk "BEGIN { system(\"echo {task}\") }"`, word},
		{"awk's program, a whole word", `awk {task}`, "{task} would be run as code here"},
		{"sed's e, in its script", `sed "1e echo {task}" /dev/null`, word},
		{"sed's script after -e", `sed -n -e {task} /dev/null`, "{task} would be run as code here"},
		{"xargs into sh -c", `printf '%s' {task} | xargs sh -c`, "{task} is on a line where a shell or an interpreter reads its input"},
		{"xargs -I into sh -c", `printf '%s' {task} | xargs -I% sh -c 'echo %'`, "{task} is on a line where a shell or an interpreter reads its input"},
		{"env -S", `env -S {task}`, "{task} would be run as code here"},
		{"env -S, in its string", `env -S "printf {task}"`, word},
		{"a pipe into an interpreter", `printf '%s' {task} | python3`, "{task} is on a line where a shell or an interpreter reads its input"},
		{"a pipe into perl", `printf '%s' {task} | perl`, "{task} is on a line where a shell or an interpreter reads its input"},
		{"a pipe into . /dev/stdin", `printf '%s' {task} | . /dev/stdin`, "{task} is on a line where a shell or an interpreter reads its input"},
		{"a heredoc's text", "cat <<EOF\n{task}\nEOF", word},
		{"an option's value", `my-agent --task={task}`, word},
		{"a git config value", `git -c core.pager={task} log`, word},
		{"beside text in double quotes", `printf '%s\n' "task: {task}"`, word},
		{"an axis value in a word", `my-agent --model=x{model}`, "{model} stands inside a larger word or a quoted string here"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			yaml := "name: hostile\ntask: " + yamlQuote(hostileTask(w.pwned())+"\nBEGIN{system(\"touch "+w.pwned()+"\")}\n1e touch "+w.pwned()) +
				"\ntools: [{name: note, effect: write}]\nagent: {command: " + yamlQuote(tt.command) + ", timeout: 30s}\naxes: {model: [m]}\n"
			path := filepath.Join(w.specDir, "hostile.yaml")
			os.WriteFile(path, []byte(yaml), 0o644)
			r := testkit.Run(t, chaosBin, w.env, 2*time.Minute, "run", path, "--dry-run", "--out", filepath.Join(w.tmp, "run"))
			if want := "hostile.yaml:4: agent.command: " + tt.want; r.Code != 1 || !strings.Contains(r.Stderr, want) {
				t.Errorf("exit %d, want 1\nstderr:\n%s\nwant it to contain %q", r.Code, r.Stderr, want)
			}
			w.check(t)
		})
	}
}
