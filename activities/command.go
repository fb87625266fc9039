package activities

import (
	"strings"

	"github.com/crashwall/chaos/spec"
)

// fillCommand replaces the {token}s of an agent command template, which runs through
// `sh -c`, with their values quoted for where they stand, so a value with spaces, quotes
// or $ arrives as one word, literally:
//
//	echo {task}      -> echo 'it'\''s done'
//	echo "{task}"    -> echo "it's \"done\""
//	echo '{task}'    -> echo 'it'\''s done'
//
// A shell's ${name} and {words} that are not tokens are left as written.
func fillCommand(template string, tokens map[string]string) string {
	const (
		plain = iota
		single
		double
	)
	var b strings.Builder
	state := plain
	for i := 0; i < len(template); {
		c := template[i]
		if c == '{' && (i == 0 || template[i-1] != '$') {
			if v, n, ok := tokenAt(template[i:], tokens); ok {
				switch state {
				case plain:
					b.WriteString(spec.ShellQuote(v))
				case single:
					b.WriteString(strings.ReplaceAll(v, `'`, `'\''`))
				case double:
					b.WriteString(doubleQuoteEscape(v))
				}
				i += n
				continue
			}
		}
		switch {
		case c == '\\' && state != single && i+1 < len(template):
			b.WriteString(template[i : i+2])
			i += 2
			continue
		case c == '\'' && state == plain:
			state = single
		case c == '\'' && state == single:
			state = plain
		case c == '"' && state == plain:
			state = double
		case c == '"' && state == double:
			state = plain
		}
		b.WriteByte(c)
		i++
	}
	return b.String()
}

// tokenAt reads a {name} at the start of s that names a token.
func tokenAt(s string, tokens map[string]string) (value string, n int, ok bool) {
	end := strings.IndexByte(s, '}')
	if end < 2 {
		return "", 0, false
	}
	name := s[1:end]
	for i := 0; i < len(name); i++ {
		c := name[i]
		letter := c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !letter && (i == 0 || !(c == '.' || (c >= '0' && c <= '9'))) {
			return "", 0, false
		}
	}
	v, ok := tokens[name]
	return v, end + 1, ok
}

// doubleQuoteEscape escapes the characters that stay special inside double quotes.
func doubleQuoteEscape(v string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "`", "\\`")
	return r.Replace(v)
}
