// Package redact finds secrets in text and replaces each with a marker
// that names its kind ("[redacted: aws-access-key]"), keeping the rest of
// the text as written. It is the one detector behind every write of
// hivemem (remember, pin, import, the hooks, the HTTP API, MCP, the
// miner's gate) and behind `hivemem scan`.
//
// Two families of rules find secrets:
//
//   - token rules, one per provider format whose shape says what it is
//     (a prefix such as AKIA, ghp_, xoxb-, sk_live_, a PEM header, a JWT's
//     eyJ…eyJ…, a password inside a URL);
//   - keyword-and-entropy rules for assignments (NAME_KEY=value,
//     "apiKey": "value", token: value, a Kubernetes env entry, a bearer
//     header): the name must say key, token, secret, password, …, and the
//     value must look random (Shannon entropy, character classes) and not
//     be a placeholder, a variable reference, a path or a digest.
//
// Allow-listed values are kept, and so are the lookalikes engineers paste
// all day (commit SHAs, UUIDs, digests, integrity hashes, example keys).
// See the package README section in the repository README for recall and
// false-positive figures on a generated corpus.
package redact

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Finding is one secret found in a text. It never carries the value:
// Hash identifies it (a purge names what it removes by hash).
type Finding struct {
	Kind string `json:"kind"`
	// Line is the 1-based line of the text the secret starts on.
	Line int `json:"line"`
	// Start and End are the byte offsets of the secret in the text.
	Start int `json:"-"`
	End   int `json:"-"`
	// Hash is the hex SHA-256 of the secret's bytes.
	Hash string `json:"-"`
}

// Counts is how many secrets of each kind a text held.
type Counts map[string]int

// Total is the number of secrets counted.
func (c Counts) Total() int {
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}

// Add adds o's counts to c (c must not be nil).
func (c Counts) Add(o Counts) {
	for k, v := range o {
		c[k] += v
	}
}

// String is "2 aws-access-key, 1 jwt" (kinds sorted), or "none".
func (c Counts) String() string {
	if c.Total() == 0 {
		return "none"
	}
	kinds := make([]string, 0, len(c))
	for k := range c {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	parts := make([]string, 0, len(kinds))
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%d %s", c[k], k))
	}
	return strings.Join(parts, ", ")
}

// Marker is what replaces a secret of kind.
func Marker(kind string) string { return "[redacted: " + kind + "]" }

// markerPrefix starts every marker; a value that starts with it is a
// marker, not a secret (redacting twice changes nothing).
const markerPrefix = "[redacted: "

// Options configure a Redactor beyond the built-in rules.
type Options struct {
	// Allow are values kept as written wherever they are found (a test
	// fixture's fake key).
	Allow []string
	// AllowPatterns are regular expressions: a found value any of them
	// matches is kept.
	AllowPatterns []string
	// Rules are extra rules, each "kind=regexp"; when the expression has a
	// capturing group, the first group is the secret, else the match.
	Rules []string
}

// Redactor finds and redacts secrets. It is safe for concurrent use.
type Redactor struct {
	rules         []rule
	allow         map[string]bool
	allowPatterns []*regexp.Regexp
}

// New builds a redactor with the built-in rules and o; a malformed
// pattern or rule is an error naming it.
func New(o Options) (*Redactor, error) {
	r := &Redactor{rules: builtin, allow: map[string]bool{}}
	for _, v := range o.Allow {
		if v = strings.TrimSpace(v); v != "" {
			r.allow[v] = true
		}
	}
	for _, p := range o.AllowPatterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("redact: allow pattern %q: %w", p, err)
		}
		r.allowPatterns = append(r.allowPatterns, re)
	}
	if len(o.Rules) > 0 {
		r.rules = slices.Clone(builtin)
		for _, s := range o.Rules {
			ru, err := parseRule(s)
			if err != nil {
				return nil, err
			}
			// Extra rules go first: a user's rule names its own kind.
			r.rules = append([]rule{ru}, r.rules...)
		}
	}
	return r, nil
}

// parseRule parses an extra rule, "kind=regexp".
func parseRule(s string) (rule, error) {
	kind, expr, ok := strings.Cut(s, "=")
	kind = strings.TrimSpace(kind)
	if !ok || !kindName.MatchString(kind) || expr == "" {
		return rule{}, fmt.Errorf("redact: rule %q: want kind=regexp, the kind in lower case letters, digits and dashes (e.g. acme-token=acme_[A-Za-z0-9]{32})", s)
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return rule{}, fmt.Errorf("redact: rule %s: %w", kind, err)
	}
	g := 0
	if re.NumSubexp() > 0 {
		g = 1
	}
	return rule{kind: kind, re: re, group: g, extra: true}, nil
}

var kindName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,47}$`)

// Default is a redactor with the built-in rules only.
var Default = &Redactor{rules: builtin, allow: map[string]bool{}}

// Find returns the secrets in text, in order, never overlapping.
func (r *Redactor) Find(text string) []Finding {
	var cands []cand
	lower := strings.ToLower(text)
	var lines []int // start offsets of text's lines, made on first need
	for pri, ru := range r.rules {
		if len(ru.keywords) > 0 && !containsAny(lower, ru.keywords) {
			continue
		}
		if ru.find != nil {
			for _, sp := range ru.find(text, lower, ru.keywords) {
				cands = r.keep(cands, ru, pri, text[sp[0]:sp[1]], sp[0], sp[1])
			}
			continue
		}
		if ru.lines == 0 {
			cands = r.match(cands, ru, pri, text, 0)
			continue
		}
		if lines == nil {
			lines = lineStarts(text)
		}
		for i, start := range lines {
			end := len(text)
			if i+1 < len(lines) {
				end = lines[i+1]
			}
			if len(ru.keywords) > 0 && !containsAny(lower[start:end], ru.keywords) {
				continue
			}
			if i+ru.lines < len(lines) {
				end = lines[i+ru.lines]
			} else {
				end = len(text)
			}
			cands = r.match(cands, ru, pri, text[start:end], start)
		}
	}
	if len(cands) == 0 {
		return nil
	}
	// The earliest wins; at one start, the rule listed first (the more
	// specific); what overlaps a chosen one is dropped.
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].start != cands[j].start {
			return cands[i].start < cands[j].start
		}
		return cands[i].pri < cands[j].pri
	})
	var out []Finding
	end, line, at := -1, 1, 0
	for _, c := range cands {
		if c.start < end {
			continue
		}
		line += strings.Count(text[at:c.start], "\n")
		at = c.start
		sum := sha256.Sum256([]byte(text[c.start:c.end]))
		out = append(out, Finding{Kind: c.kind, Line: line, Start: c.start, End: c.end, Hash: hex.EncodeToString(sum[:])})
		end = c.end
	}
	return out
}

// match appends to cands the secrets rule ru (at priority pri) finds in
// s, which starts at offset off of the text.
func (r *Redactor) match(cands []cand, ru rule, pri int, s string, off int) []cand {
	for _, m := range ru.re.FindAllStringSubmatchIndex(s, -1) {
		if ru.wordStart && m[0] > 0 && wordByte(s[m[0]-1]) {
			continue
		}
		b, e := m[0], m[1]
		if ru.group > 0 {
			b, e = m[2*ru.group], m[2*ru.group+1]
		}
		if b < 0 || e <= b {
			continue
		}
		cands = r.keep(cands, ru, pri, s[b:e], off+b, off+e)
	}
	return cands
}

// keep appends v, found at [b, e) of the text, to cands when it passes
// ru's check and is not allowed.
func (r *Redactor) keep(cands []cand, ru rule, pri int, v string, b, e int) []cand {
	if ru.check != nil && !ru.check(v) || r.allowed(v) {
		return cands
	}
	return append(cands, cand{start: b, end: e, pri: pri, kind: ru.kind})
}

func wordByte(c byte) bool { return isAlnum(c) || c == '_' }

// lineStarts are the offsets at which text's lines start.
func lineStarts(text string) []int {
	starts := []int{0}
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' && i+1 < len(text) {
			starts = append(starts, i+1)
		}
	}
	return starts
}

type cand struct {
	start, end, pri int
	kind            string
}

func (r *Redactor) allowed(v string) bool {
	if r.allow[v] {
		return true
	}
	for _, re := range r.allowPatterns {
		if re.MatchString(v) {
			return true
		}
	}
	return false
}

// Redact returns text with every secret replaced by its Marker, and the
// counts of what it replaced. A text without secrets comes back as is.
func (r *Redactor) Redact(text string) (string, Counts) {
	fs := r.Find(text)
	if len(fs) == 0 {
		return text, nil
	}
	return Apply(text, fs), CountOf(fs)
}

// Apply replaces the findings of text (as Find returned them) by markers.
func Apply(text string, fs []Finding) string {
	var b strings.Builder
	b.Grow(len(text))
	at := 0
	for _, f := range fs {
		b.WriteString(text[at:f.Start])
		b.WriteString(Marker(f.Kind))
		at = f.End
	}
	b.WriteString(text[at:])
	return b.String()
}

// CountOf counts findings by kind.
func CountOf(fs []Finding) Counts {
	if len(fs) == 0 {
		return nil
	}
	c := Counts{}
	for _, f := range fs {
		c[f.Kind]++
	}
	return c
}

func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// entropy is the Shannon entropy of s, in bits per byte.
func entropy(s string) float64 {
	if s == "" {
		return 0
	}
	var freq [256]int
	for i := 0; i < len(s); i++ {
		freq[s[i]]++
	}
	h := 0.0
	n := float64(len(s))
	for _, c := range freq {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}
