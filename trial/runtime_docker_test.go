package trial

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/crashwall/chaos/spec"
)

func TestContainerUser(t *testing.T) {
	self := fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid())
	if os.Getuid() == 0 {
		self = nobody
	}
	for _, c := range []struct{ user, want string }{{"", self}, {"1000", "1000:1000"}, {"1000:1001", "1000:1001"}} {
		s := &spec.Spec{Agent: spec.Agent{Runtime: spec.RuntimeDocker, Container: spec.Container{User: c.user}}}
		if _, _, got := containerUser(s); got != c.want {
			t.Errorf("agent.user %q: %s, want %s", c.user, got, c.want)
		}
	}
}

func TestWorkerLabel(t *testing.T) {
	host, _ := os.Hostname()
	l := workerLabel()
	h, rest, _ := strings.Cut(l, ":")
	if h != host || !processAlive(rest) {
		t.Errorf("this worker's label %q: host %q, alive %v", l, host, processAlive(rest))
	}
	pid, start, _ := strings.Cut(rest, ":")
	if processAlive(pid + ":" + start + "1") {
		t.Errorf("a process with another start time counts as this one")
	}
	if processAlive(strconv.Itoa(1<<22+7) + ":" + start) {
		t.Errorf("a pid that does not exist counts as alive")
	}
}

func TestPreviewContainerCommand(t *testing.T) {
	s, err := spec.Parse("spec.yaml", []byte(`name: t
task: do it
agent:
  command: "{chaos} agent scripted --wall-command {wall} --spec {spec} --url {wall_url}"
  runtime: docker
  image: a
tools:
  - {name: read_email, reply: "{}"}
`))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := spec.NewPlan(s, []string{"clean"}, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	p, err := PreviewAgentCommand(s, plan.Trials[0], s.Agent.Command, "/opt/chaos/chaos", "/x/spec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	vars := strings.Join(p.Vars, "\n")
	for _, want := range []string{"=" + ContainerChaos, "='" + ContainerRelay + " " + ContainerHubDir + "/hub'", "=" + ContainerSpec, "=" + ContainerWallURL} {
		if !strings.Contains(vars, want) {
			t.Errorf("the preview's variables lack %s:\n%s", want, vars)
		}
	}
}
