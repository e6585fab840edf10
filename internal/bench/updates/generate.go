// Package updates is the `hivemem bench updates` benchmark: a generated
// hive in which facts change. Each agent's memory file holds dated
// sections; some restate a subject (a database version, a timeout, a
// contact) with a new value, worded differently each time, among
// sections about other things. Every subject gets a question, and the
// benchmark measures whether search puts the newest statement first
// (current-first) and above every older one (current-above-stale); a
// question about an old value by its date measures that the past is
// still found (past-first).
//
// The generator is general: subjects, values, wordings, headings and
// filler come from templates drawn by a seeded random source, so a
// different seed is a different hive.
package updates

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// GenOptions sizes the generated hive; zero values take the defaults.
type GenOptions struct {
	Seed     uint64
	Agents   int // default 12
	Subjects int // subjects per agent, default 5
	Filler   int // unrelated sections per agent, default 25
}

func (o GenOptions) withDefaults() GenOptions {
	for _, f := range []struct {
		v   *int
		def int
	}{{&o.Agents, 12}, {&o.Subjects, 5}, {&o.Filler, 25}} {
		if *f.v <= 0 {
			*f.v = f.def
		}
	}
	return o
}

// Hive is a generated hive: one memory file per agent and the questions.
type Hive struct {
	Agents    []Agent
	Questions []Question
}

// Agent is one agent's memory file.
type Agent struct {
	ID       string
	File     []byte
	Sections []Section // in file order
}

// Section is one "## " section of a generated file.
type Section struct {
	Heading   string
	Date      string
	LineStart int // the heading's line, 1-based
	LineEnd   int
	// Subject is the key of the subject the section states ("" for
	// filler); Version its statement's place in the subject's history
	// (0 the first).
	Subject string
	Version int
}

// Question is one question, asked in its agent's wing. Want is the
// section (index into the agent's Sections) that answers it; Stale the
// sections that state an older value of the same subject (for a past
// question: every other statement of it).
type Question struct {
	Agent   string
	Text    string
	Subject string
	Want    int
	Stale   []int
	// Past marks a question about an earlier value, asked by its date.
	Past bool
	// Changes is how many times the subject's value changed.
	Changes int
}

// subject is a fact that can change: names it goes by (noun phrases),
// the values it takes, and an optional qualifier slot (an environment or
// a team) so that one agent can hold two subjects that share most words.
type subject struct {
	names  []string
	values []string
	quals  []string // "" entries allowed; {q} in names
}

var subjects = []subject{
	{names: []string{"{q}database version", "version of the {q}database", "{q}database server version"},
		values: []string{"PostgreSQL 13", "PostgreSQL 14", "PostgreSQL 15", "PostgreSQL 16", "PostgreSQL 17"},
		quals:  []string{"staging ", "production "}},
	{names: []string{"{q}deploy command", "command to deploy the {q}service", "{q}deployment command"},
		values: []string{"make deploy", "./scripts/ship.sh --prod", "kubectl apply -k deploy/overlays/prod", "task release:publish", "ansible-playbook site.yml"},
		quals:  []string{"web ", "API "}},
	{names: []string{"code review rule", "rule for code reviews", "rule for reviewing code"},
		values: []string{"one approval from anyone on the team", "two approvals", "an approval from a code owner", "two approvals, one of them from security for auth code", "one approval plus green CI"}},
	{names: []string{"{q}supplier contact", "contact at the {q}supplier", "contact person at the {q}supplier"},
		values: []string{"Dana Whitfield (dana.whitfield@northgear.example)", "Marco Ilves (m.ilves@northgear.example)", "Priya Raman (priya@boltsupply.example)", "Tomasz Kral (tkral@boltsupply.example)", "Aiko Sato (aiko.sato@partsdepot.example)"},
		quals:  []string{"hardware ", "packaging "}},
	{names: []string{"{q}request timeout", "timeout for {q}requests", "{q}HTTP request timeout"},
		values: []string{"30 seconds", "45 seconds", "60 seconds", "90 seconds", "2 minutes", "15 seconds"},
		quals:  []string{"staging ", "payment "}},
	{names: []string{"{q}server hostname", "hostname of the {q}server", "{q}server's hostname"},
		values: []string{"stg-01.internal.example", "staging.eu.example.net", "app-stage-3.example.org", "build-7.ci.example", "edge-2.example.io"},
		quals:  []string{"staging ", "build "}},
	{names: []string{"on-call lead", "lead of the on-call rotation", "on-call rotation lead"},
		values: []string{"Lena Fischer", "Omar Haddad", "Grace Liu", "Samuel Okafor", "Ines Moreau"}},
	{names: []string{"release branch", "branch we cut releases from", "branch for releases"},
		values: []string{"release/2.3", "release/2.4", "release/3.0", "rel-2025-q2", "stable-5"}},
	{names: []string{"{q}API rate limit", "rate limit of the {q}API", "{q}API request rate limit"},
		values: []string{"100 requests per minute", "250 requests per minute", "1000 requests per hour", "20 requests per second", "600 requests per minute"},
		quals:  []string{"public ", "partner "}},
	{names: []string{"backup schedule", "schedule for backups", "database backup schedule"},
		values: []string{"nightly at 02:00 UTC", "every six hours", "hourly", "twice a day, at 06:00 and 18:00", "every 30 minutes"}},
	{names: []string{"Go toolchain version", "version of the Go toolchain", "toolchain version of Go"},
		values: []string{"Go 1.22", "Go 1.23", "Go 1.24", "Go 1.25", "Go 1.26"}},
	{names: []string{"weekly sync slot", "slot of the weekly sync", "time slot for the weekly sync"},
		values: []string{"Mondays at 10:00", "Tuesdays at 15:30", "Wednesdays at 09:00", "Thursdays at 14:00", "Fridays at 11:00"}},
	{names: []string{"{q}log level", "logging level in {q}", "{q}default log level"},
		values: []string{"info", "warn", "debug", "error", "info with sampled debug"},
		quals:  []string{"production ", "staging "}},
	{names: []string{"CI runner image", "image of the CI runner", "runner image for CI"},
		values: []string{"ubuntu-22.04", "debian-bookworm-slim", "golang:1.25-alpine", "ubuntu-24.04", "fedora-41"}},
	{names: []string{"monthly cloud budget", "cloud budget, monthly", "monthly budget for the cloud"},
		values: []string{"$4,000", "$6,500", "$3,200", "$8,000", "$5,000"}},
	{names: []string{"{q}primary region", "primary region of the {q}hosting", "{q}primary hosting region"},
		values: []string{"eu-west-1", "us-east-2", "eu-central-1", "ap-southeast-1", "us-west-2"},
		quals:  []string{"app ", "data warehouse "}},
	{names: []string{"{q}cache TTL", "TTL of the {q}cache", "{q}cache entry TTL"},
		values: []string{"5 minutes", "15 minutes", "1 hour", "90 seconds", "24 hours"},
		quals:  []string{"session ", "search "}},
	{names: []string{"maximum upload size", "upload size maximum", "maximum size of an upload"},
		values: []string{"10 MB", "25 MB", "100 MB", "2 GB", "500 MB"}},
	{names: []string{"test coverage threshold", "coverage threshold for tests", "threshold of test coverage"},
		values: []string{"70%", "80%", "85%", "75%", "90%"}},
	{names: []string{"feature flag service", "service we use for feature flags", "feature flags service"},
		values: []string{"LaunchDarkly", "Unleash", "Flagsmith", "a flags table in our own database", "GrowthBook"}},
	{names: []string{"sprint length", "length of a sprint", "length of our sprints"},
		values: []string{"one week", "two weeks", "three weeks", "ten working days", "four weeks"}},
	{names: []string{"support escalation address", "address for support escalations", "escalation address of support"},
		values: []string{"escalations@example.com", "support-l2@example.com", "oncall-support@example.com", "help-urgent@example.com", "tier2@example.com"}},
	{names: []string{"SLO target for the API", "API SLO target", "target of the API SLO"},
		values: []string{"99.9%", "99.95%", "99.5%", "99.99%", "99.8%"}},
	{names: []string{"container registry", "registry for our containers", "container image registry"},
		values: []string{"ghcr.io/acme", "registry.gitlab.example/acme", "quay.io/acme", "a self-hosted Harbor at harbor.example.net", "ECR in eu-west-1"}},
	{names: []string{"Node.js version for the frontend", "frontend Node.js version", "Node.js version of the frontend"},
		values: []string{"Node 18", "Node 20", "Node 22", "Node 24", "Node 16"}},
	{names: []string{"password rotation period", "rotation period for passwords", "period of password rotation"},
		values: []string{"every 90 days", "every 60 days", "every 180 days", "once a year", "every 30 days"}},
	{names: []string{"design review room", "room for design reviews", "meeting room for design reviews"},
		values: []string{"Aurora (3rd floor)", "Basalt (2nd floor)", "the small room next to the kitchen", "Cedar (4th floor)", "the video room, Delta"}},
	{names: []string{"analytics vendor", "product analytics vendor", "vendor for product analytics"},
		values: []string{"Mixpanel", "Amplitude", "PostHog", "Plausible", "Snowplow"}},
}

// Statement wordings: {n} the subject's name, {v} the value, {o} the
// previous value. first: the first statement; update: a later one.
var (
	firstWordings = []string{
		"The {n} is {v}.",
		"For the record, the {n} is {v}.",
		"We use {v} as the {n}.",
		"{N}: {v}.",
		"Set up the {n}: {v}.",
		"Noted that the {n} is {v}.",
		"Checked the {n}, it is {v}.",
	}
	updateWordings = []string{
		"Changed the {n} from {o} to {v}.",
		"The {n} is now {v}.",
		"Heads-up: the {n} moved to {v}.",
		"From today the {n} is {v} (no longer {o}).",
		"Update on the {n}: it's {v} now.",
		"Agreed with the team that {v} will be the {n} going forward.",
		"{v} is the new {n}, replacing {o}.",
		"Switched the {n} to {v}.",
		"Note for later: {n} = {v}.",
		"We dropped {o}; the {n} became {v}.",
	}
	// Headings of a section that states a fact: about it, or generic.
	factHeadings = []string{"{n} changed", "notes on the {n}", "updated the {n}", "{n}", "decision about the {n}"}
	dayHeadings  = []string{"standup notes", "daily log", "ops sync", "notes from the team meeting", "end of day", "handover notes", "misc"}
	questions    = []string{
		"What is the {n}?",
		"What's our {n}?",
		"Do you know the {n}?",
		"Remind me of the {n}.",
		"What {n} should I use?",
		"Tell me the {n}.",
	}
	pastQuestions = []string{
		"What was the {n} on {d}?",
		"On {d}, what was the {n}?",
	}
)

// Filler: unrelated sections, from headings and lines with slots.
var (
	fillerHeadings = []string{
		"fixed flaky {c} test", "investigated {c} latency", "refactored the {c}", "paired with {p} on the {c}",
		"wrote docs for the {c}", "reviewed {p}'s pull request", "cleaned up the {c} logs", "onboarding {p}",
		"incident in the {c}", "planning the {c} rewrite", "benchmark of the {c}", "retro notes",
		"dependency upgrades", "customer call with {p}", "security review of the {c}", "migrated the {c} config",
	}
	fillerLines = []string{
		"The {c} test failed on CI because of a race in the setup; added a lock.",
		"Profiled the {c}: most of the time goes to JSON encoding.",
		"{P} suggested splitting the {c} into two packages; agreed for next sprint.",
		"Wrote a runbook section for restarting the {c}.",
		"Found {k} stale entries in the {c} table and removed them.",
		"The {c} dashboard now shows p99 latency next to p50.",
		"Left a comment on the {c} design doc about retries.",
		"Moved the {c} alerts to the shared channel.",
		"Spent an hour on a flaky assertion in the {c} suite; it was a time zone issue.",
		"{P} is out next week; I cover the {c} reviews.",
		"Customer reported slow exports; traced it to the {c}.",
		"Upgraded three libraries in the {c}; nothing broke.",
		"Added {k} unit tests around the {c} error paths.",
		"Renamed the {c} metrics to follow the naming guide.",
		"Discussed the {c} roadmap with {P}; priorities unchanged.",
		"The {c} memory use dropped by {k} percent after the fix.",
		"Closed {k} old tickets about the {c}.",
		"Drafted the postmortem for the {c} outage.",
	}
	components = []string{"billing service", "login flow", "search indexer", "export job", "notification worker",
		"admin panel", "mobile sync", "report builder", "webhook relay", "image resizer", "audit log", "scheduler"}
	people     = []string{"Alice", "Bruno", "Chen", "Dmitri", "Esther", "Farid", "Gwen", "Hiro", "Isabel", "Jonas", "Kemi", "Luis"}
	agentNames = []string{"atlas", "birch", "cobalt", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "juniper",
		"kestrel", "lumen", "maple", "nimbus", "onyx", "pylon", "quartz", "raven", "sable", "tundra"}
)

// Generate builds a hive from opts (same options, same hive).
func Generate(opts GenOptions) Hive {
	opts = opts.withDefaults()
	r := rand.New(rand.NewPCG(opts.Seed, 0x5eed))
	var h Hive
	for a := 0; a < opts.Agents; a++ {
		id := agentNames[a%len(agentNames)]
		if a >= len(agentNames) {
			id = fmt.Sprintf("%s-%d", id, a/len(agentNames)+1)
		}
		ag, qs := genAgent(r, id, opts)
		h.Agents = append(h.Agents, ag)
		h.Questions = append(h.Questions, qs...)
	}
	return h
}

// planned is one section before rendering.
type planned struct {
	day              int // days after the start
	heading          string
	lines            []string
	subject          string
	version          int
	subjectName, val string
}

func genAgent(r *rand.Rand, id string, opts GenOptions) (Agent, []Question) {
	const span = 365 // days the file covers
	start := time.Date(2025, 1, 6, 0, 0, 0, 0, time.UTC)
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
	fill := func(s string) string {
		c := pick(components)
		p := pick(people)
		return strings.NewReplacer("{c}", c, "{p}", p, "{P}", p, "{k}", fmt.Sprint(2+r.IntN(40))).Replace(s)
	}
	var secs []planned
	// Subjects: distinct templates, or one template with two qualifiers
	// (two subjects sharing most of their words).
	type chosen struct {
		key, qual string
		t         subject
	}
	var subs []chosen
	for _, ti := range r.Perm(len(subjects)) {
		if len(subs) == opts.Subjects {
			break
		}
		t := subjects[ti]
		if len(t.quals) == 0 {
			subs = append(subs, chosen{key: fmt.Sprint(ti), t: t})
			continue
		}
		qi := r.Perm(len(t.quals))
		n := 1
		if len(subs)+2 <= opts.Subjects && r.IntN(3) == 0 {
			n = 2
		}
		for _, q := range qi[:n] {
			subs = append(subs, chosen{key: fmt.Sprintf("%d/%d", ti, q), qual: t.quals[q], t: t})
		}
	}
	type history struct {
		name    string // the name questions use
		secs    []int  // indexes into secs, oldest first
		changes int
	}
	hist := map[string]*history{}
	var order []string
	for _, s := range subs {
		names := make([]string, len(s.t.names))
		for i, n := range s.t.names {
			names[i] = strings.TrimSpace(strings.ReplaceAll(n, "{q}", s.qual))
		}
		changes := 1 + r.IntN(3)
		vals := r.Perm(len(s.t.values))[:changes+1]
		// Statement days: increasing, at least a week apart.
		days := make([]int, changes+1)
		for {
			for i := range days {
				days[i] = r.IntN(span)
			}
			slices.Sort(days)
			ok := true
			for i := 1; i < len(days); i++ {
				if days[i]-days[i-1] < 7 {
					ok = false
				}
			}
			if ok {
				break
			}
		}
		hs := &history{name: pick(names), changes: changes}
		hist[s.key] = hs
		order = append(order, s.key)
		for v := 0; v <= changes; v++ {
			name := pick(names)
			val := s.t.values[vals[v]]
			var line string
			if v == 0 {
				line = pick(firstWordings)
			} else {
				line = strings.ReplaceAll(pick(updateWordings), "{o}", s.t.values[vals[v-1]])
			}
			line = strings.NewReplacer("{N}", upperFirst(name), "{n}", name, "{v}", val).Replace(line)
			p := planned{day: days[v], subject: s.key, version: v, subjectName: name, val: val}
			// Half the statements have a section of their own, half are
			// one bullet of a day's notes.
			if r.IntN(2) == 0 {
				p.heading = strings.ReplaceAll(pick(factHeadings), "{n}", name)
				p.lines = []string{"- " + line}
				if r.IntN(2) == 0 {
					p.lines = append(p.lines, "- "+fill(pick(fillerLines)))
				}
			} else {
				p.heading = pick(dayHeadings)
				p.lines = []string{"- " + fill(pick(fillerLines)), "- " + line}
				for k := r.IntN(3); k > 0; k-- {
					p.lines = append(p.lines, "- "+fill(pick(fillerLines)))
				}
				r.Shuffle(len(p.lines), func(i, j int) { p.lines[i], p.lines[j] = p.lines[j], p.lines[i] })
			}
			secs = append(secs, p)
		}
	}
	for k := 0; k < opts.Filler; k++ {
		p := planned{day: r.IntN(span), heading: fill(pick(fillerHeadings))}
		for n := 1 + r.IntN(3); n > 0; n-- {
			p.lines = append(p.lines, "- "+fill(pick(fillerLines)))
		}
		secs = append(secs, p)
	}
	// Oldest first, as agents append.
	sorted := make([]int, len(secs))
	for i := range sorted {
		sorted[i] = i
	}
	slices.SortStableFunc(sorted, func(a, b int) int { return secs[a].day - secs[b].day })

	var b strings.Builder
	fmt.Fprintf(&b, "# Memory — %s (%s)\n\n", upperFirst(id), id)
	line := 3
	ag := Agent{ID: id}
	at := make([]int, len(secs)) // planned index → Sections index
	for _, i := range sorted {
		p := secs[i]
		date := start.AddDate(0, 0, p.day).Format(time.DateOnly)
		head := date + " — " + p.heading
		fmt.Fprintf(&b, "## %s\n", head)
		for _, l := range p.lines {
			b.WriteString(l + "\n")
		}
		b.WriteString("\n")
		at[i] = len(ag.Sections)
		ag.Sections = append(ag.Sections, Section{Heading: head, Date: date, LineStart: line,
			LineEnd: line + len(p.lines), Subject: p.subject, Version: p.version})
		line += len(p.lines) + 2
	}
	ag.File = []byte(b.String())
	for i, p := range secs {
		if p.subject != "" {
			hist[p.subject].secs = append(hist[p.subject].secs, at[i])
		}
	}
	var qs []Question
	for _, key := range order {
		hs := hist[key]
		slices.SortFunc(hs.secs, func(a, b int) int { return ag.Sections[a].Version - ag.Sections[b].Version })
		newest := hs.secs[len(hs.secs)-1]
		qs = append(qs, Question{Agent: id, Subject: key, Changes: hs.changes, Want: newest,
			Text:  strings.ReplaceAll(pick(questions), "{n}", hs.name),
			Stale: slices.Clone(hs.secs[:len(hs.secs)-1])})
		// The past: one older statement, asked by its section's date.
		old := hs.secs[r.IntN(len(hs.secs)-1)]
		var others []int
		for _, s := range hs.secs {
			if s != old {
				others = append(others, s)
			}
		}
		qs = append(qs, Question{Agent: id, Subject: key, Changes: hs.changes, Want: old, Past: true, Stale: others,
			Text: strings.NewReplacer("{n}", hs.name, "{d}", ag.Sections[old].Date).Replace(pick(pastQuestions))})
	}
	return ag, qs
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
