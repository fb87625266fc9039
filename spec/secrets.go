package spec

import "sort"

// Secret is a value one of the spec's ${VAR}s takes where chaos fills it in.
type Secret struct{ Name, Value string }

// Secrets are the values the spec's secret references take in lookup's environment
// (os.LookupEnv when nil): every ${VAR} of agent.env, of each server's env, headers and
// URL, and of the reviewer's key, each under its variable's name; and each whole value
// with text besides its ${VAR}s ("Bearer ${TOKEN}") under its key. A variable that is not
// set is left out (chaos refuses to fill it in anyway). model.upstream and the reviewer's
// base URL are not secrets: a URL without credentials, recorded in the manifest.
func (s *Spec) Secrets(lookup func(string) (string, bool)) []Secret {
	var out []Secret
	add := func(key, template string) {
		refs := SecretRefs(template)
		if len(refs) == 0 {
			return
		}
		whole, err := ExpandSecrets(template, lookup)
		if err == nil && template != "${"+refs[0]+"}" {
			out = append(out, Secret{key, whole})
		}
		for _, name := range refs {
			if v, err := ExpandSecrets("${"+name+"}", lookup); err == nil {
				out = append(out, Secret{name, v})
			}
		}
	}
	addMap := func(m map[string]string) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			add(EnvName(k), m[k])
		}
	}
	addMap(s.Agent.Env)
	for _, sv := range s.Servers {
		addMap(sv.Env)
		addMap(sv.Headers)
		add(EnvName(sv.Name)+"_URL", sv.URL)
	}
	if r := s.Model.Reviewer; r != nil {
		add("REVIEWER_API_KEY", r.APIKey)
	}
	return out
}
