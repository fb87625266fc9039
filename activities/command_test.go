package activities

import (
	"os/exec"
	"strings"
	"testing"
)

// The filled-in command, run by sh, hands the agent each value as written.
func TestFillCommand(t *testing.T) {
	tokens := map[string]string{
		"task":  `it's "done" for $HOME and ` + "`x`" + ` \ ok`,
		"wall":  "/bin/chaos wall --hub http://127.0.0.1:1",
		"empty": "",
		"model": "small",
	}
	tests := []struct {
		template string
		want     []string // the words the shell passes to printf
	}{
		{`{task}`, []string{tokens["task"]}},
		{`"{task}"`, []string{tokens["task"]}},
		{`'{task}'`, []string{tokens["task"]}},
		{`"task: {task}!"`, []string{"task: " + tokens["task"] + "!"}},
		{`--wall-command {wall} --model {model}`, []string{"--wall-command", tokens["wall"], "--model", "small"}},
		{`a{empty}b {empty}`, []string{"ab", ""}},
		{`{nope} \{task} '${task}'`, []string{"{nope}", "{task}", "${task}"}},
		{`"it's" '{model}' \"{model}\"`, []string{"it's", "small", `"small"`}},
	}
	for _, tt := range tests {
		cmd := "printf '%s\\0' " + fillCommand(tt.template, tokens)
		out, err := exec.Command("sh", "-c", cmd).Output()
		if err != nil {
			t.Errorf("%s: sh -c %s: %v", tt.template, cmd, err)
			continue
		}
		got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
		if strings.Join(got, "\x00") != strings.Join(tt.want, "\x00") {
			t.Errorf("%s -> %s\ngot  %q\nwant %q", tt.template, fillCommand(tt.template, tokens), got, tt.want)
		}
	}
}
