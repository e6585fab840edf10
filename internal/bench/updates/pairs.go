package updates

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"unicode"
)

// The second part of the benchmark: generated pairs of notes written one
// after the other by one agent. Half change a value of the first note
// (every class below); half repeat it in another form (case, punctuation,
// list marker, an article, a contraction, a number in words, a phrase
// moved); and unrelated pairs, two notes on different subjects, check
// that the write names no older note as restated by mistake.

// Pair is two notes an agent writes one after the other.
type Pair struct {
	// Kind is "change", "repeat" or "unrelated"; Class the class of
	// change ("number", "state", …) or the form of the repeat ("case", …).
	Kind, Class string
	Old, New    string
}

// PairOptions sizes the generated pairs; zero values take the defaults.
type PairOptions struct {
	Seed     uint64
	PerClass int // change pairs per class, default 8
}

// pairSubjects are things a team notes a fact about.
var pairSubjects = []string{"the staging cluster", "the billing API", "the nightly export", "the search service",
	"the payments gateway", "the build farm", "the reporting database", "the mobile backend", "the customer portal",
	"the message queue", "the auth proxy", "the metrics pipeline", "the image cache", "the partner sandbox"}

// valueClass generates a change of one class: sentence frames with a
// slot, and the values the slot takes in groups: a value of one group
// and a value of another say different things (within a group, "is not"
// and "isn't", they say the same).
type valueClass struct {
	name   string
	frames []string // {s} the subject, {v} the value
	groups [][]string
}

// each puts every value in a group of its own.
func each(vs ...string) [][]string {
	out := make([][]string, len(vs))
	for i, v := range vs {
		out[i] = []string{v}
	}
	return out
}

var valueClasses = []valueClass{
	{"number", []string{"The rate limit of {s} is {v} requests per minute.", "{S} keeps {v} replicas.", "{S} retries a failed call {v} times."},
		each("3", "5", "12", "40", "100", "250", "600", "1200")},
	{"unit", []string{"The timeout of {s} is 30 {v}.", "{S} stores 20 {v} of logs.", "Responses of {s} are cached for 10 {v}."},
		each("seconds", "minutes", "hours", "days", "MB", "GB")},
	{"negation", []string{"{S} {v} flaky.", "The health check of {s} {v} reliable.", "{S} {v} covered by the on-call rota."},
		[][]string{{"is"}, {"is not", "isn't", "is no longer"}}},
	{"state", []string{"The maintenance switch of {s} is {v}.", "{S} is {v} right now.", "The feature flag for {s} is {v}."},
		[][]string{{"on", "up", "live", "running", "active"}, {"off", "down", "paused", "stopped", "idle"}}},
	{"enabled", []string{"Two-factor login for {s} is {v}.", "Autoscaling of {s} is {v}.", "Debug logging in {s} is {v}."},
		[][]string{{"enabled", "turned on", "required"}, {"disabled", "turned off", "optional"}}},
	{"open", []string{"The firewall port of {s} is {v}.", "The change window for {s} is {v}.", "The incident about {s} is {v}."},
		[][]string{{"open", "unlocked", "reopened"}, {"closed", "locked", "resolved"}}},
	{"before-after", []string{"Migrate {s} {v} the release.", "Rotate the keys of {s} {v} the audit.", "Snapshot {s} {v} the upgrade."},
		[][]string{{"before", "ahead of"}, {"after", "right after"}, {"during"}}},
	{"modal", []string{"The tests of {s} {v} run in parallel.", "Deploys of {s} {v} happen on Fridays.", "Interns {v} restart {s}."},
		[][]string{{"must"}, {"can", "may"}, {"should"}, {"must not", "cannot"}, {"need not"}}},
	{"access", []string{"The replica of {s} is {v}.", "The shared volume of {s} is mounted {v}.", "Contractors get {v} access to {s}."},
		each("read-only", "read-write", "write-only", "no")},
	{"name", []string{"{v} owns {s}.", "Ask {v} before changing {s}.", "The on-call contact for {s} is {v}."},
		each("Alice", "Bogdan", "Carmen", "Deepa", "Emeka", "Freya", "Gustavo", "Hana")},
	{"tool", []string{"{S} is monitored with {v}.", "We build {s} with {v}.", "Errors from {s} go to {v}."},
		each("prometheus", "datadog", "grafana", "sentry", "bazel", "gradle", "jenkins", "buildkite")},
	{"colour", []string{"{S} runs on the {v} cluster.", "The {v} deployment serves {s}.", "Alerts for {s} use the {v} channel."},
		each("blue", "green", "red", "amber", "purple", "orange", "grey")},
	{"version", []string{"{S} runs Python {v}.", "{S} is pinned to version {v}.", "The client library of {s} is at v{v}."},
		each("3.10", "3.11", "3.12", "2.4.1", "2.5.0", "1.9", "4.0")},
	{"time", []string{"{S} is backed up at {v} UTC.", "The daily report of {s} runs at {v}.", "Restarts of {s} happen at {v}."},
		each("02:00", "03:30", "06:00", "9 am", "11 pm", "noon", "midnight")},
	{"date", []string{"The freeze of {s} starts on {v}.", "{S} is retired on {v}.", "The contract for {s} renews on {v}."},
		each("March 3", "March 10", "2026-04-01", "2026-05-15", "June 1st", "the 20th of July")},
	{"place", []string{"{S} is hosted in {v}.", "The primary region of {s} is {v}.", "Backups of {s} are kept in {v}."},
		each("Frankfurt", "Dublin", "Oregon", "Tokyo", "the EU", "the US", "eu-west-1", "us-east-2")},
}

// class is the value class named name.
func class(name string) valueClass {
	for _, c := range valueClasses {
		if c.name == name {
			return c
		}
	}
	panic("updates: no value class " + name)
}

// Ways a later note says that it changes something (wrapped around the
// new note's sentence): most changes come with no such word.
var changeWrappers = []string{"{x}", "{x}", "{x}", "Now: {x}", "Update: {x}", "{x} (changed today)", "From now on, {y}", "{x} instead"}

// repeatForms are ways to write a note again with nothing changed; from
// is the class of note each form applies to ("" any).
var repeatForms = []struct {
	name, from string
	fn         func(r *rand.Rand, s string) string
}{
	{"case", "", func(_ *rand.Rand, s string) string { return strings.ToLower(s) }},
	{"punctuation", "", func(r *rand.Rand, s string) string {
		s = strings.TrimRight(s, ".!")
		return s + []string{"", "!", " .", "..."}[r.IntN(4)]
	}},
	{"list marker", "", func(r *rand.Rand, s string) string { return []string{"- ", "* ", "• "}[r.IntN(3)] + s }},
	{"article", "", func(_ *rand.Rand, s string) string {
		if rest, ok := strings.CutPrefix(s, "The "); ok {
			return upperFirst(rest)
		}
		return strings.Replace(s, " the ", " ", 1)
	}},
	{"contraction", "negation", func(_ *rand.Rand, s string) string {
		for _, c := range [][2]string{{"is not", "isn't"}, {"isn't", "is not"}} {
			if strings.Contains(s, c[0]) {
				return strings.Replace(s, c[0], c[1], 1)
			}
		}
		return s + " "
	}},
	{"number in words", "number", func(_ *rand.Rand, s string) string {
		for _, c := range [][2]string{{" 3 ", " three "}, {" 5 ", " five "}, {" 12 ", " twelve "}} {
			if strings.Contains(s, c[0]) {
				return strings.Replace(s, c[0], c[1], 1)
			}
		}
		return s + " "
	}},
	{"phrase moved", "date", func(_ *rand.Rand, s string) string {
		if i := strings.LastIndex(s, " on "); i > 0 {
			return "On " + strings.TrimSuffix(s[i+4:], ".") + ", " + lowerFirst(s[:i]) + "."
		}
		return s + " "
	}},
	{"spacing", "", func(_ *rand.Rand, s string) string { return "  " + strings.ReplaceAll(s, " ", "  ") + "\n" }},
}

func lowerFirst(s string) string {
	r := []rune(s)
	if len(r) > 1 && unicode.IsUpper(r[0]) && !unicode.IsUpper(r[1]) {
		r[0] = unicode.ToLower(r[0])
	}
	return string(r)
}

// fill puts subject s and value v into frame f ({S}: s capitalised).
func fill(f, s, v string) string {
	out := strings.ReplaceAll(f, "{S}", upperFirst(s))
	out = strings.ReplaceAll(out, "{s}", s)
	return upperFirst(strings.ReplaceAll(out, "{v}", v))
}

// GeneratePairs draws the pairs (same options, same pairs): PerClass
// changes of every class, as many repeats, spread over the forms, and as
// many unrelated pairs as repeats.
func GeneratePairs(opts PairOptions) []Pair {
	if opts.PerClass <= 0 {
		opts.PerClass = 8
	}
	r := rand.New(rand.NewPCG(opts.Seed, 0x9a125))
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
	note := func(c valueClass) (frame, subj, v string) {
		g := c.groups[r.IntN(len(c.groups))]
		return pick(c.frames), pick(pairSubjects), pick(g)
	}
	var out []Pair
	for _, c := range valueClasses {
		for range opts.PerClass {
			f, s := pick(c.frames), pick(pairSubjects)
			gv := r.IntN(len(c.groups))
			gw := r.IntN(len(c.groups) - 1)
			if gw >= gv {
				gw++
			}
			v, w := pick(c.groups[gv]), pick(c.groups[gw])
			neu := fill(f, s, w)
			wrap := pick(changeWrappers)
			neu = strings.ReplaceAll(wrap, "{x}", strings.TrimSuffix(neu, "."))
			neu = strings.ReplaceAll(neu, "{y}", lowerFirst(fill(f, s, w)))
			out = append(out, Pair{Kind: "change", Class: c.name, Old: fill(f, s, v), New: neu})
		}
	}
	changes := len(out)
	for i := range changes {
		form := repeatForms[i%len(repeatForms)]
		c := valueClasses[r.IntN(len(valueClasses))]
		if form.from != "" {
			c = class(form.from)
		}
		f, s, v := note(c)
		switch form.name {
		case "contraction":
			v = pick([]string{"is not", "isn't"})
		case "number in words":
			v = pick([]string{"3", "5", "12"})
		}
		old := fill(f, s, v)
		out = append(out, Pair{Kind: "repeat", Class: form.name, Old: old, New: form.fn(r, old)})
	}
	for range changes / 2 {
		a, b := r.IntN(len(valueClasses)), r.IntN(len(valueClasses))
		fa, sa, va := note(valueClasses[a])
		fb, sb, vb := note(valueClasses[b])
		if fa == fb || sa == sb {
			continue
		}
		out = append(out, Pair{Kind: "unrelated", Class: valueClasses[a].name + "/" + valueClasses[b].name, Old: fill(fa, sa, va), New: fill(fb, sb, vb)})
	}
	return out
}

// Written is what writing a pair's new note after its old one did.
type Written struct {
	Refused  bool // taken for a repeat: nothing written
	Restates bool // the write named the old note as restated
}

// WriteFunc writes note old, then note new, for a fresh agent, and says
// what the second write did.
type WriteFunc func(ctx context.Context, agent, old, new string) (Written, error)

// PairResult is the pairs part of the run.
type PairResult struct {
	Seed    uint64 `json:"seed"`
	Changes int    `json:"changes"`
	// ChangesRefused: changed notes taken for a repeat (goal 0).
	ChangesRefused int `json:"changes_refused"`
	// ChangesRestating: changed notes whose write named the old one.
	ChangesRestating int `json:"changes_restating"`
	Repeats          int `json:"repeats"`
	// RepeatsWritten: repeats written anyway (as few as possible).
	RepeatsWritten int `json:"repeats_written"`
	Unrelated      int `json:"unrelated"`
	// WrongRestates: unrelated notes whose write named the other as
	// restated (goal 0).
	WrongRestates int `json:"wrong_restates"`
	// Refused and Written list the misses by class: "class: old → new".
	RefusedByClass map[string]int `json:"changes_refused_by_class,omitempty"`
	WrittenByForm  map[string]int `json:"repeats_written_by_form,omitempty"`
	Misses         []string       `json:"misses,omitempty"`
}

// RunPairs writes every generated pair through write and counts.
func RunPairs(ctx context.Context, opts PairOptions, write WriteFunc) (PairResult, error) {
	res := PairResult{Seed: opts.Seed, RefusedByClass: map[string]int{}, WrittenByForm: map[string]int{}}
	for i, p := range GeneratePairs(opts) {
		w, err := write(ctx, fmt.Sprintf("pair-%04d", i), p.Old, p.New)
		if err != nil {
			return res, fmt.Errorf("updates: pair %d (%s %s): %w", i, p.Kind, p.Class, err)
		}
		miss := false
		switch p.Kind {
		case "change":
			res.Changes++
			if w.Refused {
				res.ChangesRefused++
				res.RefusedByClass[p.Class]++
				miss = true
			}
			if w.Restates {
				res.ChangesRestating++
			}
		case "repeat":
			res.Repeats++
			if !w.Refused {
				res.RepeatsWritten++
				res.WrittenByForm[p.Class]++
				miss = true
			}
		case "unrelated":
			res.Unrelated++
			if w.Restates || w.Refused {
				res.WrongRestates++
				miss = true
			}
		}
		if miss {
			res.Misses = append(res.Misses, fmt.Sprintf("%s %s: %q → %q", p.Kind, p.Class, p.Old, p.New))
		}
	}
	slices.Sort(res.Misses)
	return res, nil
}
