package deploy_test

import (
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// composeFile is the part of a compose file the checks read.
type composeFile struct {
	Name     string                    `yaml:"name"`
	Services map[string]composeService `yaml:"services"`
	Volumes  map[string]any            `yaml:"volumes"`
}

type composeService struct {
	Image string `yaml:"image"`
	Build *struct {
		Context    string `yaml:"context"`
		Dockerfile string `yaml:"dockerfile"`
	} `yaml:"build"`
	Ports       []string          `yaml:"ports"`
	Environment map[string]string `yaml:"environment"`
	Command     []string          `yaml:"command"`
	Volumes     []string          `yaml:"volumes"`
}

// docService is a row of the services table in docs/deploy.md.
type docService struct {
	name, image string
	ports, env  []string
}

var backticked = regexp.MustCompile("`([^`]+)`")

// documentedServices reads the table under "## The services" in docs/deploy.md.
func documentedServices(t *testing.T) []docService {
	t.Helper()
	b, err := os.ReadFile("../docs/deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.Index(text, "## The services")
	if i < 0 {
		t.Fatal(`docs/deploy.md has no "## The services" section`)
	}
	var rows []docService
	for _, line := range strings.Split(text[i:], "\n")[1:] {
		if strings.HasPrefix(line, "## ") {
			break
		}
		cols := strings.Split(strings.Trim(line, "| "), "|")
		if !strings.HasPrefix(line, "| `") || len(cols) != 4 {
			continue
		}
		ticks := func(col string) []string {
			var out []string
			for _, m := range backticked.FindAllStringSubmatch(col, -1) {
				out = append(out, m[1])
			}
			return out
		}
		row := docService{name: ticks(cols[0])[0], ports: ticks(cols[2]), env: ticks(cols[3])}
		if img := ticks(cols[1]); len(img) == 1 && !strings.Contains(cols[1], "built from") {
			row.image = img[0]
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		t.Fatal("docs/deploy.md: the services table has no rows")
	}
	return rows
}

func readCompose(t *testing.T) composeFile {
	t.Helper()
	b, err := os.ReadFile("../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("docker-compose.yml is not valid YAML for compose: %v", err)
	}
	return c
}

// publishes reports whether a service publishes port on the host.
func publishes(s composeService, port string) bool {
	for _, p := range s.Ports {
		parts := strings.Split(strings.SplitN(p, "/", 2)[0], ":")
		if len(parts) >= 2 && parts[len(parts)-2] == port {
			return true
		}
	}
	return false
}

// TestComposeMatchesTheDocs: every service, image, port and variable docs/deploy.md names
// is in docker-compose.yml, and every service and variable of the compose file is in the
// docs.
func TestComposeMatchesTheDocs(t *testing.T) {
	c := readCompose(t)
	docs := documentedServices(t)
	documented := map[string]bool{}
	for _, d := range docs {
		documented[d.name] = true
		s, ok := c.Services[d.name]
		if !ok {
			t.Errorf("docs/deploy.md names service %s; docker-compose.yml has none", d.name)
			continue
		}
		if d.image != "" && s.Image != d.image {
			t.Errorf("service %s: image %q, the docs say %q", d.name, s.Image, d.image)
		}
		for _, p := range d.ports {
			if !publishes(s, p) {
				t.Errorf("service %s does not publish port %s (ports %v)", d.name, p, s.Ports)
			}
		}
		for _, e := range d.env {
			if _, ok := s.Environment[e]; !ok {
				t.Errorf("service %s has no environment variable %s", d.name, e)
			}
		}
		for e := range s.Environment {
			if !contains(d.env, e) {
				t.Errorf("service %s sets %s, which docs/deploy.md does not mention", d.name, e)
			}
		}
	}
	for name := range c.Services {
		if !documented[name] {
			t.Errorf("docker-compose.yml has service %s, which docs/deploy.md does not describe", name)
		}
	}
}

// TestComposeWiring: the services reach each other the way the docs say.
func TestComposeWiring(t *testing.T) {
	c := readCompose(t)
	pg, temporal, ui, worker := c.Services["postgres"], c.Services["temporal"], c.Services["temporal-ui"], c.Services["chaos-worker"]
	if !strings.HasPrefix(temporal.Image, "temporalio/auto-setup:") || temporal.Environment["DB"] != "postgres12" {
		t.Errorf("temporal: image %q with DB=%q, want the official auto-setup image with DB=postgres12", temporal.Image, temporal.Environment["DB"])
	}
	if temporal.Environment["POSTGRES_SEEDS"] != "postgres" || temporal.Environment["POSTGRES_USER"] != pg.Environment["POSTGRES_USER"] ||
		temporal.Environment["POSTGRES_PWD"] != pg.Environment["POSTGRES_PASSWORD"] {
		t.Errorf("temporal does not log in to the postgres service: %v vs %v", temporal.Environment, pg.Environment)
	}
	if !strings.HasPrefix(ui.Image, "temporalio/ui:") || ui.Environment["TEMPORAL_ADDRESS"] != "temporal:7233" {
		t.Errorf("temporal-ui: %+v", ui)
	}
	if worker.Build == nil || worker.Build.Context != "deploy" || worker.Build.Dockerfile != "Dockerfile" {
		t.Fatalf("chaos-worker is not built from deploy/Dockerfile: %+v", worker.Build)
	}
	if _, err := os.Stat(filepath.Join("..", worker.Build.Context, worker.Build.Dockerfile)); err != nil {
		t.Errorf("chaos-worker's Dockerfile: %v", err)
	}
	if got := strings.Join(worker.Command, " "); !strings.HasPrefix(got, "worker --temporal temporal:7233") {
		t.Errorf("chaos-worker runs %q, want chaos worker --temporal temporal:7233", got)
	}
	u, err := url.Parse(worker.Environment["CHAOS_DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	if u.Hostname() != "postgres" || strings.TrimPrefix(u.Path, "/") != pg.Environment["POSTGRES_DB"] ||
		u.User.Username() != pg.Environment["POSTGRES_USER"] {
		t.Errorf("CHAOS_DATABASE_URL %q is not the postgres service's results database %q", u.Redacted(), pg.Environment["POSTGRES_DB"])
	}
	// The password is the environment's, never a literal in the file, and not in the URL
	// (a password with URL syntax in it would break the URL): the worker's pgx reads
	// PGPASSWORD.
	if _, set := u.User.Password(); set {
		t.Errorf("CHAOS_DATABASE_URL %q holds a password; the worker takes it from PGPASSWORD", u.Redacted())
	}
	for name, v := range map[string]string{
		"postgres POSTGRES_PASSWORD": pg.Environment["POSTGRES_PASSWORD"],
		"temporal POSTGRES_PWD":      temporal.Environment["POSTGRES_PWD"],
		"chaos-worker PGPASSWORD":    worker.Environment["PGPASSWORD"],
	} {
		if !strings.HasPrefix(v, "${CHAOS_DB_PASSWORD:?") {
			t.Errorf("%s is %q, want the required ${CHAOS_DB_PASSWORD:?...} from the environment or .env", name, v)
		}
	}
	for _, s := range c.Services {
		for _, v := range s.Volumes {
			name := strings.SplitN(v, ":", 2)[0]
			if !strings.HasPrefix(name, ".") && !strings.HasPrefix(name, "/") {
				if _, ok := c.Volumes[name]; !ok {
					t.Errorf("volume %s is used but not declared", name)
				}
			}
		}
	}
}

// TestComposePublishesOnLoopback: every published port binds to ${CHAOS_BIND:-127.0.0.1},
// so a laptop's compose exposes nothing beyond it unless CHAOS_BIND says so.
func TestComposePublishesOnLoopback(t *testing.T) {
	c := readCompose(t)
	for name, s := range c.Services {
		for _, p := range s.Ports {
			if !strings.HasPrefix(p, "${CHAOS_BIND:-127.0.0.1}:") {
				t.Errorf("service %s publishes %q on every interface, want \"${CHAOS_BIND:-127.0.0.1}:...\"", name, p)
			}
		}
	}
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
