package spec

import (
	"path"
	"regexp"
	"slices"
	"strings"
)

// FillCommand turns an agent command template into the shell text that runs, with every
// token replaced by a reference to the environment variable that carries its value
// (TokenVar): `"$CHAOS_TASK"` where the token stands bare, `${CHAOS_TASK}` inside "..." or
// an unquoted heredoc, and a token that is the whole of a '...' becomes `"$CHAOS_TASK"`.
// No value is ever written into the text, so no value can be read as shell code by the
// shell that runs it: the shell expands a variable after it has parsed the line, and
// never parses the result again.
//
// A token whose value is text (IsTextToken: {task}, an axis value, the operator's
// message) is accepted only as a whole word of the command line: on its own between
// spaces, or alone in quotes ("{task}", '{task}'). There its value reaches the program as
// one argument, byte for byte. Anywhere else (inside a larger word, inside a quoted
// string beside other text, in a heredoc, in ${...} or arithmetic) it is a problem: such
// text is where a command writes code for another program (sh -c '...', awk, sed,
// env -S, python -c, ...), and no list of those programs is ever complete. A whole word
// is a problem too where the command hands it to something that runs it (the code of a
// nested shell, eval, source, awk or sed, env -S, an interpreter's -c; a line piped into
// a shell, an interpreter or xargs with a shell). The other tokens ({sandbox}, {wall_url},
// ... values chaos makes) may also stand inside a word ({wall_url}/mcp). isToken says
// which {words} are tokens; other words stay as written. The problems carry byte offsets
// into template.
func FillCommand(template string, isToken func(string) bool) (string, []tokenProblem) {
	f := &filler{src: template, isToken: isToken}
	f.stack = []*frame{{kind: fPlain, cmd: &command{}}}
	f.run()
	return f.out.String(), f.probs
}

// IsTextToken says whether a token's value is text that chaos does not make: the task,
// the operator's message, the agent's session id, an axis value. Such a token is
// accepted only as a whole word of a command (FillCommand).
func IsTextToken(name string) bool {
	return name == "task" || slices.Contains(ResumeTokens, name) || !slices.Contains(CommandTokens, name) && name != "chaos"
}

// TokenVar is the environment variable that carries a token's value to the agent's
// shell: CHAOS_TASK, CHAOS_SANDBOX, ...; {chaos} is CHAOS_BIN; an axis is
// CHAOS_AXIS_<NAME> (upper case, _ for any other character).
func TokenVar(name string) string {
	if name == "chaos" {
		return "CHAOS_BIN"
	}
	if slices.Contains(CommandTokens, name) || slices.Contains(ResumeTokens, name) {
		return "CHAOS_" + strings.ToUpper(name)
	}
	return "CHAOS_AXIS_" + EnvName(name)
}

// TokenEnv is the environment that carries the tokens' values (name -> value), in
// name order: what FillCommand's references read.
func TokenEnv(tokens map[string]string) []string {
	names := make([]string, 0, len(tokens))
	for k := range tokens {
		names = append(names, k)
	}
	slices.Sort(names)
	env := make([]string, len(names))
	for i, k := range names {
		env[i] = TokenVar(k) + "=" + tokens[k]
	}
	return env
}

var notEnvChar = regexp.MustCompile(`[^A-Z0-9_]`)

// EnvName is a name as an environment variable name: upper case, _ for the rest.
func EnvName(s string) string { return notEnvChar.ReplaceAllString(strings.ToUpper(s), "_") }

type frameKind int

const (
	fPlain  frameKind = iota // the top level, $(...), `...`, <(...): quoting starts afresh
	fDouble                  // "..."
	fParam                   // ${...}
	fArith                   // $((...)), ((...)), $[...]
)

type frame struct {
	kind   frameKind
	close  byte // fPlain: ')' or '`' (0 at the top); fParam '}'; fArith ')' or ']'
	depth  int  // open parentheses or braces inside
	quoted bool // fParam: inside "..."
	start  int  // fParam: offset of its text
	cmd    *command
}

// command is the simple command being read in a plain frame, word by word, enough to see
// whether a word is code for another program.
type command struct {
	words  []string
	cur    strings.Builder
	inWord bool
	line   [][]string // the commands that ended on this line
	tokens []int      // offsets of tokens filled on this line
}

func (c *command) endWord() {
	if c.inWord {
		c.words = append(c.words, c.cur.String())
		c.cur.Reset()
		c.inWord = false
		if len(c.words) == 1 && slices.Contains(reservedWords, c.words[0]) {
			c.words = nil
		}
	}
}

func (c *command) endCommand() {
	c.endWord()
	if len(c.words) > 0 {
		c.line = append(c.line, c.words)
	}
	c.words = nil
}

func (c *command) add(s string) { c.cur.WriteString(s); c.inWord = true }

var reservedWords = []string{"if", "then", "else", "elif", "do", "while", "until", "!", "{", "time"}

type heredoc struct {
	delim  string
	quoted bool
	dash   bool
}

type filler struct {
	src     string
	i       int
	out     strings.Builder
	stack   []*frame
	isToken func(string) bool
	probs   []tokenProblem
	pending []heredoc
}

func (f *filler) top() *frame { return f.stack[len(f.stack)-1] }

func (f *filler) push(fr *frame) {
	if p := f.plain(); p != nil {
		p.cmd.add("\x00")
	}
	f.stack = append(f.stack, fr)
}

// plain is the innermost plain frame.
func (f *filler) plain() *frame {
	for i := len(f.stack) - 1; i >= 0; i-- {
		if f.stack[i].kind == fPlain {
			return f.stack[i]
		}
	}
	return nil
}

func (f *filler) problem(at int, name, msg string) {
	r := strings.NewReplacer("NAME", "{"+name+"}", "VAR", TokenVar(name))
	f.probs = append(f.probs, tokenProblem{Offset: at, Msg: "{" + name + "} " + r.Replace(msg)})
}

const (
	msgCode   = `would be run as code here (a nested shell's code, eval, source, ssh, the program of awk or sed, env -S): chaos never puts a value into code; pass it as an argument (sh -c '... "$1"' sh NAME) or write "$VAR" in the nested code`
	msgSingle = `stands beside other text inside '...', text that may be code for another program (sh -c 'echo NAME'), so no value is filled in there; quote the token on its own ('...'NAME or "... NAME"), or write "$VAR" in the nested code`
	msgArith  = `would be evaluated as an arithmetic expression here ($((...)), ((...)), let, [[ ]], an array index); compare it as text instead`
	msgQuoted = `is never expanded in a quoted heredoc (<<'EOF'); use an unquoted one (<<EOF), where it becomes ${VAR}`
	msgANSI   = `cannot stand inside $'...'; write "NAME" instead`
	msgWord   = `stands inside a larger word or a quoted string here; its value is text, accepted only as a whole word of the command (NAME between spaces, or "NAME" alone), where it reaches the program as one argument and is never read as code: give it its own word (sh -c '... "$1"' sh NAME), or write "$VAR" in the nested code`
	msgPiped  = `is on a line where a shell or an interpreter reads its input (| sh, | python3, | xargs sh -c, | . /dev/stdin, sh <<EOF), so the value could reach it as code; pass it as an argument (sh -c '... "$1"' sh NAME) or write "$VAR" in the script`
)

func (f *filler) run() {
	for f.i < len(f.src) {
		before := f.i
		switch f.top().kind {
		case fPlain:
			f.stepPlain()
		case fDouble:
			f.stepDouble()
		case fParam:
			f.stepParam()
		case fArith:
			f.stepArith()
		}
		if f.i == before { // never loop: a byte no step took is copied as it is
			f.emit(f.src[f.i : f.i+1])
			f.i++
		}
	}
	f.endLine()
}

func (f *filler) emit(s string) { f.out.WriteString(s) }

// token reads a {name} token at f.i; it returns the name and its length.
func (f *filler) token() (string, int, bool) {
	if f.src[f.i] != '{' || (f.i > 0 && f.src[f.i-1] == '$') {
		return "", 0, false
	}
	loc := tokenPattern.FindStringIndex(f.src[f.i:])
	if loc == nil || loc[0] != 0 {
		return "", 0, false
	}
	name := f.src[f.i+1 : f.i+loc[1]-1]
	if !f.isToken(name) {
		return "", 0, false
	}
	return name, loc[1], true
}

// inCode says whether the text at f.i is code for another program: in some enclosing
// plain frame, the word being read is a nested shell's code, or eval's.
func (f *filler) inCode() bool {
	for _, fr := range f.stack {
		if fr.kind == fPlain && codeWord(fr.cmd.words) {
			return true
		}
	}
	return false
}

func (f *filler) inArith() bool {
	for _, fr := range f.stack {
		switch {
		case fr.kind == fArith:
			return true
		case fr.kind == fPlain && arithWord(fr.cmd):
			return true
		case fr.kind == fParam && subscript.MatchString(f.src[fr.start:f.i]):
			return true
		}
	}
	return false
}

var subscript = regexp.MustCompile(`^[#!]?[A-Za-z_][A-Za-z0-9_]*\[[^\]]*$`)

// wordStart says whether a word of the shell starts at offset at: the text before it
// ends a word (a blank, an operator, an opening parenthesis or backquote) and is not
// escaped.
func (f *filler) wordStart(at int) bool {
	if at == 0 {
		return true
	}
	if !strings.ContainsRune(" \t\n;&|()<>`", rune(f.src[at-1])) {
		return false
	}
	return at < 2 || f.src[at-2] != '\\'
}

// wordEnd says whether a word of the shell ends at offset at.
func (f *filler) wordEnd(at int) bool {
	return at >= len(f.src) || strings.ContainsRune(" \t\n;&|()<>`", rune(f.src[at]))
}

// fill writes the reference for a token, or notes the problem with it.
func (f *filler) fill(name string, quoted bool) {
	at := f.i
	switch {
	case f.inArith():
		f.problem(at, name, msgArith)
		f.emit("{" + name + "}")
	case f.inCode():
		f.problem(at, name, msgCode)
		f.emit("{" + name + "}")
	case quoted:
		f.emit("${" + TokenVar(name) + "}")
	default:
		f.emit(`"$` + TokenVar(name) + `"`)
	}
	for _, fr := range f.stack {
		if fr.kind == fPlain {
			fr.cmd.tokens = append(fr.cmd.tokens, at)
		}
	}
}

func (f *filler) stepPlain() {
	fr := f.top()
	c := f.src[f.i]
	rest := f.src[f.i:]
	switch {
	case c == '\\' && f.i+1 < len(f.src):
		f.emit(rest[:2])
		if rest[1] != '\n' { // a line continuation joins the lines
			fr.cmd.add(rest[1:2])
		}
		f.i += 2
		return
	case c == '{':
		if name, n, ok := f.token(); ok {
			if IsTextToken(name) && !(f.wordStart(f.i) && f.wordEnd(f.i+n)) {
				f.problem(f.i, name, msgWord)
				f.emit(f.src[f.i : f.i+n])
			} else {
				f.fill(name, false)
			}
			fr.cmd.add("\x00")
			f.i += n
			return
		}
	case c == '\'':
		f.single(fr)
		return
	case c == '"':
		f.emit(`"`)
		f.i++
		f.push(&frame{kind: fDouble})
		return
	case strings.HasPrefix(rest, "$'"):
		f.ansi()
		return
	case strings.HasPrefix(rest, "$(("), strings.HasPrefix(rest, "(("):
		n := strings.Index(rest, "((") + 2
		f.emit(rest[:n])
		f.i += n
		f.push(&frame{kind: fArith, close: ')'})
		return
	case strings.HasPrefix(rest, "$["):
		f.emit("$[")
		f.i += 2
		f.push(&frame{kind: fArith, close: ']'})
		return
	case strings.HasPrefix(rest, "$("), strings.HasPrefix(rest, "<("), strings.HasPrefix(rest, ">("):
		f.emit(rest[:2])
		f.i += 2
		f.push(&frame{kind: fPlain, close: ')', cmd: &command{}})
		return
	case strings.HasPrefix(rest, "${"):
		f.emit("${")
		f.i += 2
		f.push(&frame{kind: fParam, close: '}', start: f.i})
		return
	case c == '`':
		f.emit("`")
		f.i++
		if fr.close == '`' {
			f.pop()
		} else {
			f.push(&frame{kind: fPlain, close: '`', cmd: &command{}})
		}
		return
	case c == '#' && !fr.cmd.inWord:
		end := strings.IndexByte(rest, '\n')
		if end < 0 {
			end = len(rest)
		}
		f.emit(rest[:end]) // a comment is never run: its {words} stay as written
		f.i += end
		return
	case strings.HasPrefix(rest, "<<") && !strings.HasPrefix(rest, "<<<"):
		f.heredocOp()
		return
	case c == '(':
		fr.depth++
		fr.cmd.endCommand()
	case c == ')':
		if fr.close == ')' && fr.depth == 0 {
			fr.cmd.endCommand()
			f.emit(")")
			f.i++
			f.pop()
			return
		}
		fr.depth--
		fr.cmd.endCommand()
	case c == '\n':
		f.emit("\n")
		f.i++
		f.bodies(f.endLine())
		return
	case c == ';' || c == '&' || c == '|':
		fr.cmd.endCommand()
	case c == ' ' || c == '\t':
		fr.cmd.endWord()
	default:
		fr.cmd.add(string(c))
	}
	f.emit(string(c))
	f.i++
}

func (f *filler) pop() {
	fr := f.top()
	if fr.kind == fPlain {
		fr.cmd.endCommand()
		f.checkLine(fr.cmd)
	}
	f.stack = f.stack[:len(f.stack)-1]
}

// single reads a '...' in a plain frame (or an unquoted ${...}).
func (f *filler) single(fr *frame) {
	end := strings.IndexByte(f.src[f.i+1:], '\'')
	if end < 0 {
		end = len(f.src) - f.i // unterminated: the shell will say so
	} else {
		end += 2
	}
	seg := f.src[f.i : f.i+end]
	inner := strings.TrimSuffix(strings.TrimPrefix(seg, "'"), "'")
	var names []int
	for _, loc := range tokenPattern.FindAllStringIndex(inner, -1) {
		if (loc[0] > 0 && inner[loc[0]-1] == '$') || !f.isToken(inner[loc[0]+1:loc[1]-1]) {
			continue
		}
		names = append(names, loc[0])
	}
	switch {
	case len(names) == 0:
		f.emit(seg)
	case len(names) == 1 && tokenPattern.FindString(inner) == inner && strings.HasSuffix(seg, "'") && len(seg) > 1:
		name := inner[1 : len(inner)-1]
		if IsTextToken(name) && (fr == nil || !f.wordStart(f.i) || !f.wordEnd(f.i+end)) {
			f.problem(f.i+1, name, msgWord)
			f.emit(seg)
			break
		}
		f.i++ // the offset of the token itself
		f.fill(name, false)
		f.i--
	default:
		for _, at := range names {
			loc := tokenPattern.FindStringIndex(inner[at:])
			name := inner[at+1 : at+loc[1]-1]
			if IsTextToken(name) {
				f.problem(f.i+1+at, name, msgWord)
			} else {
				f.problem(f.i+1+at, name, msgSingle)
			}
		}
		f.emit(seg)
	}
	if fr != nil && fr.cmd != nil {
		fr.cmd.add(strings.ReplaceAll(seg, "'", ""))
	}
	f.i += end
}

// ansi reads a bash $'...', in which a backslash escapes the quote.
func (f *filler) ansi() {
	j := f.i + 2
	for j < len(f.src) && f.src[j] != '\'' {
		if f.src[j] == '\\' {
			j++
		}
		j++
	}
	j = min(j+1, len(f.src))
	seg := f.src[f.i:j]
	for _, loc := range tokenPattern.FindAllStringIndex(seg, -1) {
		if name := seg[loc[0]+1 : loc[1]-1]; f.isToken(name) {
			f.problem(f.i+loc[0], name, msgANSI)
		}
	}
	f.emit(seg)
	if p := f.plain(); p != nil {
		p.cmd.add("\x00")
	}
	f.i = j
}

func (f *filler) stepDouble() {
	c := f.src[f.i]
	rest := f.src[f.i:]
	switch {
	case c == '\\' && f.i+1 < len(f.src):
		f.emit(rest[:2])
		f.i += 2
		return
	case c == '"':
		f.emit(`"`)
		f.i++
		f.stack = f.stack[:len(f.stack)-1]
		return
	case c == '{':
		if name, n, ok := f.token(); ok {
			// "{task}" alone, as a whole word of a command, is the token's own word.
			alone := f.src[f.i-1] == '"' && f.i+n < len(f.src) && f.src[f.i+n] == '"' &&
				len(f.stack) > 1 && f.stack[len(f.stack)-2].kind == fPlain && f.wordStart(f.i-1) && f.wordEnd(f.i+n+1)
			if IsTextToken(name) && !alone {
				f.problem(f.i, name, msgWord)
				f.emit(f.src[f.i : f.i+n])
			} else {
				f.fill(name, true)
			}
			f.i += n
			return
		}
	default:
		if f.openExpansion(rest, true, true) {
			return
		}
	}
	f.emit(string(c))
	f.i++
}

// openExpansion enters the nested construct rest starts with, as stepDouble and
// stepParam see them: $((...)), $[...] (when brackets), $(...), ${...} (quoted: inside
// double quotes) or `...`. It is false when rest starts none of them.
func (f *filler) openExpansion(rest string, brackets, quoted bool) bool {
	switch {
	case strings.HasPrefix(rest, "$(("):
		f.open("$((", &frame{kind: fArith, close: ')'})
	case brackets && strings.HasPrefix(rest, "$["):
		f.open("$[", &frame{kind: fArith, close: ']'})
	case strings.HasPrefix(rest, "$("):
		f.open("$(", &frame{kind: fPlain, close: ')', cmd: &command{}})
	case strings.HasPrefix(rest, "${"):
		f.open("${", &frame{kind: fParam, close: '}', quoted: quoted, start: f.i})
	case strings.HasPrefix(rest, "`"):
		f.open("`", &frame{kind: fPlain, close: '`', cmd: &command{}})
	default:
		return false
	}
	return true
}

// open copies the opening text of a nested construct and enters it.
func (f *filler) open(text string, fr *frame) {
	f.emit(text)
	f.i += len(text)
	f.stack = append(f.stack, fr)
}

func (f *filler) stepParam() {
	fr := f.top()
	c := f.src[f.i]
	rest := f.src[f.i:]
	switch {
	case c == '\\' && f.i+1 < len(f.src):
		f.emit(rest[:2])
		f.i += 2
		return
	case c == '{':
		if name, n, ok := f.token(); ok {
			if f.i == fr.start {
				f.problem(f.i, name, msgCode) // ${{task}}: a name made of the value
			} else if IsTextToken(name) {
				f.problem(f.i, name, msgWord)
			} else {
				f.fill(name, fr.quoted)
			}
			f.i += n
			return
		}
		fr.depth++
	case c == '}':
		if fr.depth == 0 {
			f.emit("}")
			f.i++
			f.stack = f.stack[:len(f.stack)-1]
			return
		}
		fr.depth--
	case c == '\'' && !fr.quoted:
		f.single(nil)
		return
	case c == '"':
		f.open(`"`, &frame{kind: fDouble})
		return
	default:
		if f.openExpansion(rest, false, fr.quoted) {
			return
		}
	}
	f.emit(string(c))
	f.i++
}

func (f *filler) stepArith() {
	fr := f.top()
	c := f.src[f.i]
	switch {
	case c == '{':
		if name, n, ok := f.token(); ok {
			f.problem(f.i, name, msgArith)
			f.emit(f.src[f.i : f.i+n])
			f.i += n
			return
		}
	case c == '(' && fr.close == ')':
		fr.depth++
	case c == ')' && fr.close == ')':
		if fr.depth == 0 && strings.HasPrefix(f.src[f.i:], "))") {
			f.emit("))")
			f.i += 2
			f.stack = f.stack[:len(f.stack)-1]
			return
		}
		fr.depth--
	case c == ']' && fr.close == ']':
		f.emit("]")
		f.i++
		f.stack = f.stack[:len(f.stack)-1]
		return
	}
	f.emit(string(c))
	f.i++
}

// heredocOp reads `<<DELIM`, `<<-DELIM`, `<<'DELIM'`; its body starts on the next line.
func (f *filler) heredocOp() {
	j := f.i + 2
	h := heredoc{}
	if j < len(f.src) && f.src[j] == '-' {
		h.dash = true
		j++
	}
	for j < len(f.src) && (f.src[j] == ' ' || f.src[j] == '\t') {
		j++
	}
	var d strings.Builder
	for j < len(f.src) && !strings.ContainsRune(" \t\n;&|<>()", rune(f.src[j])) {
		switch f.src[j] {
		case '\'', '"':
			h.quoted = true
			q := f.src[j]
			k := strings.IndexByte(f.src[j+1:], q)
			if k < 0 {
				k = len(f.src) - j - 1
			}
			d.WriteString(f.src[j+1 : j+1+k])
			j += k + 2
			continue
		case '\\':
			h.quoted = true
			j++
			if j < len(f.src) {
				d.WriteByte(f.src[j])
			}
			j++
			continue
		}
		d.WriteByte(f.src[j])
		j++
	}
	j = min(j, len(f.src))
	h.delim = d.String()
	f.pending = append(f.pending, h)
	f.emit(f.src[f.i:j])
	f.i = j
}

// endLine checks the line that ended in every plain frame: a token on a line where a
// shell reads its input (a pipe or heredoc into it) is a problem. It says whether the
// heredocs of the line feed code to a shell.
func (f *filler) endLine() (code bool) {
	code = f.inCode()
	for _, fr := range f.stack {
		if fr.kind == fPlain {
			fr.cmd.endCommand()
			if slices.ContainsFunc(fr.cmd.line, readsCode) {
				code = true
			}
			f.checkLine(fr.cmd)
			fr.cmd.line = nil
		}
	}
	return code
}

func (f *filler) checkLine(c *command) {
	if len(c.tokens) > 0 && slices.ContainsFunc(c.line, readsCode) {
		for _, at := range c.tokens {
			if name, _, ok := (&filler{src: f.src, i: at, isToken: f.isToken}).token(); ok {
				f.problem(at, name, msgPiped)
			}
		}
	}
	c.tokens = nil
}

// bodies reads the heredocs whose operators were on the line that just ended.
func (f *filler) bodies(code bool) {
	pending := f.pending
	f.pending = nil
	for _, h := range pending {
		for f.i < len(f.src) {
			end := strings.IndexByte(f.src[f.i:], '\n')
			if end < 0 {
				end = len(f.src) - f.i
			} else {
				end++
			}
			line := f.src[f.i : f.i+end]
			probe := strings.TrimRight(line, "\n")
			if h.dash {
				probe = strings.TrimLeft(probe, "\t")
			}
			if probe == h.delim {
				f.emit(line)
				f.i += end
				break
			}
			f.bodyLine(line, h, code)
		}
	}
}

func (f *filler) bodyLine(line string, h heredoc, code bool) {
	start := f.i
	for k := 0; k < len(line); {
		if line[k] == '\\' && !h.quoted && k+1 < len(line) {
			f.emit(line[k : k+2])
			k += 2
			continue
		}
		if line[k] == '{' {
			f.i = start + k
			if name, n, ok := f.token(); ok {
				switch {
				case IsTextToken(name):
					f.problem(f.i, name, msgWord)
					f.emit(line[k : k+n])
				case h.quoted:
					f.problem(f.i, name, msgQuoted)
					f.emit(line[k : k+n])
				case code:
					f.problem(f.i, name, msgPiped)
					f.emit(line[k : k+n])
				default:
					f.emit("${" + TokenVar(name) + "}")
				}
				k += n
				continue
			}
		}
		f.emit(line[k : k+1])
		k++
	}
	f.i = start + len(line)
}

var (
	shells       = []string{"sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "yash", "fish", "busybox", "su", "runuser"}
	interpreters = []string{"python", "python2", "python3", "perl", "ruby", "node", "nodejs", "php", "lua", "osascript", "pwsh"}
	evaluators   = []string{"eval", ".", "source", "ssh", "let", "trap", "watch"}
	wrappers     = []string{"exec", "command", "builtin", "nohup", "time", "nice", "setsid", "stdbuf", "sudo", "doas", "env", "xargs", "timeout", "chroot", "unbuffer", "script"}
)

// bare is a word as a program name: quotes removed, the directory dropped.
func bare(w string) string {
	w = strings.NewReplacer("'", "", `"`, "", `\`, "").Replace(w)
	return path.Base(w)
}

func isInterpreter(name string) bool {
	name = strings.TrimRight(name, "0123456789.")
	return slices.Contains(shells, name) || slices.Contains(interpreters, name)
}

// codeFlag is an option after which a shell or an interpreter takes code: -c, -lc, -e, ...
func codeFlag(w string) bool {
	w = bare(w)
	if w == "--eval" || w == "--command" || w == "-r" || w == "-E" || w == "-p" {
		return true
	}
	return len(w) > 1 && w[0] == '-' && w[1] != '-' && strings.ContainsAny(w[1:], "ce")
}

// codeWord says whether the word after words (the one being read) is code: the word
// after -c of a shell or interpreter anywhere in the command (so wrappers such as env,
// xargs, timeout, sudo or find -exec are seen through), or an argument of eval, source,
// ssh and the like.
func codeWord(words []string) bool {
	next := len(words)
	for j, w := range words {
		if !isInterpreter(bare(w)) {
			continue
		}
		for k := j + 1; k < len(words); k++ {
			if codeFlag(words[k]) {
				// the code is the first word after the flag that is not an option
				m := k + 1
				for m < len(words) && strings.HasPrefix(words[m], "-") {
					m++
				}
				if m == next {
					return true
				}
				break
			}
			if !strings.HasPrefix(words[k], "-") {
				break
			}
		}
	}
	if name, at := commandName(words); at >= 0 && at < next && slices.Contains(evaluators, name) {
		return true
	}
	for j, w := range words {
		name := strings.TrimRight(bare(w), "0123456789.")
		switch {
		case name == "env" || name == "busybox":
			// env -S STRING / --split-string=...: the string is split into a command.
			for k := j + 1; k < next; k++ {
				if a := bare(words[k]); a == "-S" || a == "--split-string" || (strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "S")) {
					if k+1 == next {
						return true
					}
				}
			}
		case slices.Contains(programTakers, name):
			// awk 'PROGRAM' / sed 'SCRIPT': the first operand is a program (sed's e and
			// awk's system() run commands); so is what follows -e, -f aside.
			m := j + 1
			for m < len(words) && strings.HasPrefix(words[m], "-") {
				if a := bare(words[m]); a == "-e" || a == "--expression" || a == "--source" {
					if m+1 == next {
						return true
					}
					m++
				} else if a == "-v" || a == "-F" || a == "-f" {
					m++ // its value
				}
				m++
			}
			if m == next {
				return true
			}
		}
	}
	return false
}

// programTakers are programs whose first operand is a program of their own language.
var programTakers = []string{"awk", "gawk", "mawk", "nawk", "sed", "gsed", "perl", "ruby", "jq"}

// commandName is the program a command runs, past assignments and wrappers.
func commandName(words []string) (string, int) {
	for j := 0; j < len(words); j++ {
		w := words[j]
		if assignment.MatchString(w) || strings.HasPrefix(w, "-") {
			continue
		}
		name := bare(w)
		if slices.Contains(wrappers, name) {
			if name == "timeout" {
				for j+1 < len(words) && strings.HasPrefix(words[j+1], "-") {
					j++
				}
				j++ // the duration
			}
			continue
		}
		return name, j
	}
	return "", -1
}

var assignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=`)

// readsCode says whether a command reads code from its input: a shell or an
// interpreter with no -c and no script file, source or . of /dev/stdin (or any /dev/ or
// /proc/ file), xargs handing its input to a shell or interpreter.
func readsCode(words []string) bool {
	for j, w := range words {
		name := bare(w)
		if name == "xargs" {
			for _, a := range words[j+1:] {
				if isInterpreter(bare(a)) {
					return true
				}
			}
			continue
		}
		if !isInterpreter(name) && name != "source" && name != "." {
			continue
		}
		if name == "source" || name == "." {
			if j+1 < len(words) {
				arg := strings.NewReplacer("'", "", `"`, "", `\`, "").Replace(words[j+1])
				return strings.HasPrefix(arg, "/dev/") || strings.HasPrefix(arg, "/proc/") || arg == "-"
			}
			return false
		}
		stdin := true
		for _, a := range words[j+1:] {
			switch {
			case a == "-s" || a == "-" || a == "/dev/stdin":
				return true
			case codeFlag(a):
				stdin = false
			case !strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "<") && !strings.HasPrefix(a, ">"):
				if name == "busybox" && (a == "sh" || a == "ash") {
					continue
				}
				stdin = false
			}
			if !stdin {
				break
			}
		}
		if stdin {
			return true
		}
	}
	return false
}

// arithWord says whether the word being read is evaluated as arithmetic: let's
// arguments, a [[ ... ]] with a numeric comparison, an array element being assigned.
func arithWord(c *command) bool {
	if name, at := commandName(c.words); at >= 0 && name == "let" {
		return true
	}
	if len(c.words) > 0 && c.words[0] == "[[" {
		for _, w := range c.words {
			if slices.Contains([]string{"-eq", "-ne", "-lt", "-le", "-gt", "-ge"}, w) {
				return true
			}
		}
		return true // the operator may come after the token: [[ {x} -eq 1 ]]
	}
	for _, w := range c.words {
		if !assignment.MatchString(w) {
			return false
		}
	}
	return subscript.MatchString(c.cur.String())
}
