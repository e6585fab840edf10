package redact

import (
	"regexp"
	"strings"
)

// rule is one detector: a match of re (its group'th submatch, 0 the whole
// match) that passes check is a secret of kind. keywords, when set, are
// lower-case strings one of which the text must hold for the rule to run
// at all (a cheap pre-filter).
type rule struct {
	kind     string
	re       *regexp.Regexp
	group    int
	keywords []string
	check    func(v string) bool
	// find, when set, is used instead of re: it returns the [start, end)
	// spans of candidate secrets in text (lower is text in lower case).
	find  func(text, lower string, keywords []string) [][2]int
	extra bool // from the configuration
	// wordStart: the match must start a word (the expression leaves out
	// a leading \b so that Go's regexp can skip to its literal prefix).
	wordStart bool
	// lines, when > 0, runs the rule only on windows of that many lines
	// starting at a line that holds one of the keywords, instead of on
	// the whole text (the generic rules, whose leading character class
	// would make every position a start).
	lines int
}

// tok is a token rule: expr matched where a word starts, in a text that
// holds one of the keywords.
func tok(kind, expr string, keywords ...string) rule {
	return rule{kind: kind, re: regexp.MustCompile(expr), keywords: keywords, wordStart: true}
}

// builtin are the rules every redactor has, the token rules (specific)
// before the assignment rules (generic): at one position, the rule listed
// first names the kind.
var builtin = []rule{
	// PEM private keys: the whole block; a block cut short (a paste that
	// stops mid-key) up to the end of its base64 lines.
	{kind: "private-key", re: regexp.MustCompile(`-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----`),
		keywords: []string{"private key"}, check: hasBase64Run},
	{kind: "private-key", re: regexp.MustCompile(`-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:\s*[A-Za-z0-9+/=]{16,})+`),
		keywords: []string{"private key"}},
	{kind: "aws-access-key", re: regexp.MustCompile(`(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z2-7]{16}\b`),
		// AWS's documentation's example keys (…EXAMPLE) are redacted too:
		// they are what a pasted key most often is in a test, and the
		// format stands for nothing else.
		keywords: []string{"akia", "asia", "abia", "acca", "agpa", "aida", "aroa", "aipa", "anpa", "anva", "apka"}, wordStart: true},
	{kind: "aws-secret-key", re: regexp.MustCompile(`(?i)aws[a-z0-9_.-]{0,20}(?:secret|sk)[a-z0-9_.-]{0,20}["']?\s*(?::=|=>|=|:)\s*["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`),
		group: 1, keywords: []string{"aws"}},
	tok("github-token", `gh[pousr]_[A-Za-z0-9]{36,251}\b`, "ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
	tok("github-fine-grained-pat", `github_pat_[A-Za-z0-9_]{60,}`, "github_pat_"),
	tok("gitlab-token", `gl(?:pat|dt|rt|ptt|ft|imt|oas|soat|cbt)-[A-Za-z0-9_-]{20,}`, "glpat-", "gldt-", "glrt-", "glptt-", "glft-", "glimt-", "gloas-", "glsoat-", "glcbt-"),
	tok("slack-webhook", `https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}`, "hooks.slack.com"),
	tok("slack-token", `xox[abposre]-[0-9A-Za-z-]{10,}`, "xox"),
	tok("slack-token", `xapp-\d-[A-Z0-9]{8,}-\d{8,}-[a-z0-9]{32,}`, "xapp-"),
	tok("anthropic-api-key", `sk-ant-[a-z]{3,6}\d{2}-[A-Za-z0-9_-]{40,}`, "sk-ant-"),
	tok("openai-api-key", `sk-(?:(?:proj|svcacct|admin|None)-)?[A-Za-z0-9_-]{16,}T3BlbkFJ[A-Za-z0-9_-]{16,}`, "t3blbkfj"),
	tok("openai-api-key", `sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}`, "sk-proj-", "sk-svcacct-", "sk-admin-"),
	// OpenAI's older keys: sk- and 48 letters and digits.
	{kind: "openai-api-key", re: regexp.MustCompile(`sk-[A-Za-z0-9]{48}\b`), keywords: []string{"sk-"}, wordStart: true, check: mixedCase},
	// Secret (sk_) and restricted (rk_) keys; publishable keys (pk_) are
	// public by design.
	tok("stripe-key", `[rs]k_(?:live|test|prod)_[A-Za-z0-9]{20,}`, "k_live_", "k_test_", "k_prod_"),
	tok("webhook-signing-secret", `whsec_[A-Za-z0-9+/=_-]{20,}`, "whsec_"),
	tok("google-api-key", `AIza[A-Za-z0-9_-]{35}`, "aiza"),
	tok("npm-token", `npm_[A-Za-z0-9]{36}\b`, "npm_"),
	tok("pypi-token", `pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}`, "pypi-"),
	tok("sendgrid-api-key", `SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}`, "sg."),
	tok("twilio-api-key", `SK[0-9a-fA-F]{32}\b`, "sk"),
	{kind: "huggingface-token", re: regexp.MustCompile(`hf_[A-Za-z]{30,40}\b`), keywords: []string{"hf_"}, wordStart: true, check: mixedCase},
	tok("digitalocean-token", `do[opr]_v1_[a-f0-9]{64}\b`, "_v1_"),
	tok("shopify-token", `shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b`, "shp"),
	tok("linear-api-key", `lin_api_[A-Za-z0-9]{40}\b`, "lin_api_"),
	tok("age-secret-key", `AGE-SECRET-KEY-1[0-9A-Z]{58}\b`, "age-secret-key-"),
	tok("databricks-token", `dapi[a-f0-9]{32}\b`, "dapi"),
	tok("jwt", `eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}`, "eyj"),
	// A password inside a URL: scheme://user:password@host.
	{kind: "url-password", keywords: []string{"://"}, find: findURLPasswords, check: urlPassword},
	// An Authorization header's credentials, a bearer token anywhere.
	{kind: "bearer-token", re: regexp.MustCompile(`(?i)\bauthorization\s*:\s*(?:bearer|token|basic)\s+([A-Za-z0-9._~+/=-]{16,})`),
		group: 1, keywords: []string{"authorization"}, lines: 1, check: randomLooking},
	{kind: "bearer-token", re: regexp.MustCompile(`(?i)\bbearer\s+([A-Za-z0-9._~+/-]{20,}=*)`),
		group: 1, keywords: []string{"bearer"}, lines: 1, check: randomLooking},
	// NAME_KEY=value, "apiKey": "value", token: value, --token value, a
	// Kubernetes env entry (name: X_TOKEN, value: on the next line), and
	// "PAYMENTS_SECRET is value" in prose.
	{kind: "secret-assignment", keywords: secretKeywords, find: findAssignments, check: randomLooking},
}

var secretKeywords = []string{"key", "token", "secret", "passw", "pwd", "passphrase", "credential", "private"}

// hasBase64Run says whether s holds a run of 20 base64 characters (a PEM
// block with a body, not a documentation stub).
func hasBase64Run(s string) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isAlnum(c) || c == '+' || c == '/' || c == '=' {
			run++
			if run >= 20 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func mixedCase(v string) bool {
	return strings.ContainsAny(v, upperChars) && strings.ContainsAny(v, lowerChars)
}

const (
	upperChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	lowerChars = "abcdefghijklmnopqrstuvwxyz"
	digitChars = "0123456789"
)

// placeholderWords are values that stand for a secret without being one.
var placeholderWords = []string{
	"password", "passwd", "secret", "changeme", "change_me", "example", "redacted", "replace", "placeholder",
	"your", "xxxx", "****", "....", "dummy", "sample", "insert", "todo", "fixme", "null", "none", "undefined",
}

// placeholder says whether v stands for a secret rather than being one:
// a variable reference, a template, a marker, a stub word.
func placeholder(v string) bool {
	if strings.HasPrefix(v, markerPrefix) || strings.HasPrefix(v, "[redacted") {
		return true
	}
	switch v[0] {
	case '$', '<', '{', '%', '(', '[', '*':
		return true
	}
	l := strings.ToLower(v)
	for _, w := range placeholderWords {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// urlPassword says whether a URL's password part is one (not a
// placeholder such as ${PGPASSWORD}, <password> or ****).
func urlPassword(v string) bool {
	if v == "" || placeholder(v) {
		return false
	}
	return strings.Trim(v, "*x.") != ""
}

// codeRef matches a value that names where the secret comes from
// instead of holding it: config.apiKey, process.env.API_KEY, OTHER_VAR.
var codeRef = regexp.MustCompile(`^(?:[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+(?:\(\))?|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)$`)

// randomLooking says whether an assigned value looks like a secret: not a
// placeholder, reference, path, URL or plain word, of two character
// classes at least and random enough.
func randomLooking(v string) bool {
	if len(v) < 8 || placeholder(v) || codeRef.MatchString(v) || plainWord(v) {
		return false
	}
	if strings.ContainsAny(v, ":()[]{}\\") || strings.HasPrefix(v, "/") || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "~") {
		return false
	}
	classes := 0
	for _, set := range []string{upperChars, lowerChars, digitChars} {
		if strings.ContainsAny(v, set) {
			classes++
		}
	}
	if classes < 2 {
		return false
	}
	if strings.Count(v, "-") >= 2 && !strings.ContainsAny(v, upperChars) && wordsOnly(v) {
		return false // a slug: my-app-prod-2
	}
	min := 3.0
	if len(v) < 16 {
		min = 2.5
	}
	return entropy(v) >= min
}

// plainWord says whether v is a word as prose writes it: letters only, in
// lower case, capitalised, or all capitals ("Appreciate" after "support
// is key." is the next sentence, not a secret).
func plainWord(v string) bool {
	v = strings.TrimRight(v, ".!?")
	if v == "" {
		return false
	}
	for i := 0; i < len(v); i++ {
		if !isLetter(v[i]) {
			return false
		}
	}
	rest := v[1:]
	return strings.ToLower(rest) == rest || strings.ToUpper(v) == v
}

// wordsOnly says whether v is dash- or underscore-separated pieces of at
// most 8 characters each (a name, not a random string).
func wordsOnly(v string) bool {
	for _, p := range strings.FieldsFunc(v, func(r rune) bool { return r == '-' || r == '_' || r == '.' }) {
		if len(p) > 8 {
			return false
		}
	}
	return true
}

// findURLPasswords returns the password of every scheme://user:pw@host
// in text.
func findURLPasswords(text, _ string, _ []string) [][2]int {
	var out [][2]int
	for at := 0; ; {
		i := strings.Index(text[at:], "://")
		if i < 0 {
			return out
		}
		i += at
		at = i + 3
		// A scheme before: letters, digits, + . -, starting with a letter.
		j := i
		for j > 0 && (isAlnum(text[j-1]) || strings.IndexByte("+.-", text[j-1]) >= 0) {
			j--
		}
		if j == i || !isLetter(text[j]) {
			continue
		}
		// The authority: up to / ? # or a blank; userinfo ends at its last @.
		k := at
		for k < len(text) && strings.IndexByte("/?#\"'<> \t\r\n", text[k]) < 0 {
			k++
		}
		auth := text[at:k]
		atSign := strings.LastIndexByte(auth, '@')
		if atSign <= 0 || atSign == len(auth)-1 {
			continue
		}
		colon := strings.IndexByte(auth[:atSign], ':')
		if colon < 0 || colon == atSign-1 {
			continue
		}
		out = append(out, [2]int{at + colon + 1, at + atSign})
	}
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// nameByte is a byte of a variable's or key's name.
func nameByte(c byte) bool { return isAlnum(c) || c == '_' || c == '.' || c == '-' }

// valueEnd are the bytes that end an assigned value.
const valueEnd = " \t\r\n\"'`,;"

// findAssignments returns the values assigned to names that say they are
// secret: NAME_KEY=value, "apiKey": "value", token: value,
// --token value, a Kubernetes env entry (name: X_TOKEN with value: on the
// next line), "the PAYMENTS_SECRET is value".
func findAssignments(text, lower string, keywords []string) [][2]int {
	var out [][2]int
	lastName := -1
	for _, kw := range keywords {
		for at := 0; ; {
			i := strings.Index(lower[at:], kw)
			if i < 0 {
				break
			}
			i += at
			at = i + len(kw)
			// The whole name holding the keyword.
			s, e := i, i+len(kw)
			for s > 0 && nameByte(text[s-1]) {
				s--
			}
			for e < len(text) && nameByte(text[e]) {
				e++
			}
			if s == lastName || s > 0 && (text[s-1] == '+' || text[s-1] == '/') {
				continue // seen, or inside a base64 run
			}
			lastName = s
			if notSecretName(text[s:e]) {
				continue
			}
			v, prose, ok := assignedValue(text, e)
			// In prose ("the key is X", no = or :), the keyword must be a
			// word of its own or a part of a name (not Turkey, Keywords),
			// and a value with no digit is most often the sentence's next
			// word.
			if ok && (!prose || keywordIsPart(text, s, i, kw) && strings.ContainsAny(text[v[0]:v[1]], digitChars)) {
				out = append(out, v)
			}
		}
	}
	return out
}

// keywordIsPart says whether the keyword kw found at i, in the name that
// starts at s, is a part of that name: at its start, after a separator
// (_ - .) or at a camelCase boundary, and ending the name, a separator or
// a camelCase part (a plural s allowed; "passw" may go on: password).
func keywordIsPart(text string, s, i int, kw string) bool {
	if i > s && !strings.ContainsRune("_-.", rune(text[i-1])) && !(isLower(text[i-1]) && isUpper(text[i])) {
		return false
	}
	if kw == "passw" {
		return true
	}
	e := i + len(kw)
	if e < len(text) && text[e] == 's' {
		e++
	}
	return e >= len(text) || !nameByte(text[e]) || strings.ContainsRune("_-.", rune(text[e])) || isUpper(text[e])
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

// notSecretName says whether a name that holds a secret word names
// something else: a public key, or a key's id, name, path, URL, type or
// size (kms_key_id, SECRET_NAME, privateKeyPath, max_tokens).
func notSecretName(name string) bool {
	name = strings.Trim(name, ".-_")
	lower := strings.ToLower(name)
	if strings.Contains(lower, "public") || strings.Contains(lower, "pubkey") || strings.HasPrefix(lower, "pub_") {
		return true
	}
	for _, suf := range notSecretSuffixes {
		if strings.HasSuffix(lower, "_"+suf) || strings.HasSuffix(lower, "-"+suf) || strings.HasSuffix(lower, "."+suf) {
			return true
		}
		// camelCase: keyId, secretName, tokenUrl.
		if c := strings.ToUpper(suf[:1]) + suf[1:]; strings.HasSuffix(name, c) && len(name) > len(c) && isLower(name[len(name)-len(c)-1]) {
			return true
		}
	}
	return false
}

var notSecretSuffixes = []string{"id", "ids", "name", "names", "path", "file", "dir", "url", "uri", "arn", "type", "length", "len", "size", "count", "version", "tokens"}

func isLower(c byte) bool { return c >= 'a' && c <= 'z' }

// assignedValue reads what follows a name ending at e: a closing quote,
// then a separator (:= => = :) or " is "/" to " or a blank, then the
// value, possibly quoted; or a line break and "value:" (a Kubernetes env
// entry).
func assignedValue(text string, e int) (v [2]int, prose bool, ok bool) {
	p := e
	if p < len(text) && (text[p] == '"' || text[p] == '\'') {
		p++
	}
	blanks := func() {
		for p < len(text) && (text[p] == ' ' || text[p] == '\t') {
			p++
		}
	}
	blanks()
	switch {
	case p < len(text) && (text[p] == '\r' || text[p] == '\n'):
		// name: X_TOKEN, then value: on the next line.
		for p < len(text) && (text[p] == '\r' || text[p] == '\n') {
			p++
		}
		blanks()
		if !strings.HasPrefix(text[p:], "value:") {
			return [2]int{}, false, false
		}
		p += len("value:")
	case strings.HasPrefix(text[p:], ":="), strings.HasPrefix(text[p:], "=>"):
		p += 2
	case p < len(text) && (text[p] == '=' || text[p] == ':'):
		p++
	case p == e:
		return [2]int{}, false, false // no separator: inside a longer word
	default:
		// A blank: "--token value", "SECRET is value".
		prose = true
		for _, w := range []string{"is ", "to ", "was ", "as ", "of "} {
			if strings.HasPrefix(text[p:], w) {
				p += len(w)
				break
			}
		}
	}
	blanks()
	if p < len(text) && strings.IndexByte("\"'`", text[p]) >= 0 {
		p++
	}
	q := p
	for q < len(text) && strings.IndexByte(valueEnd, text[q]) < 0 {
		q++
	}
	if q-p < 8 {
		return [2]int{}, false, false
	}
	return [2]int{p, q}, prose, true
}
