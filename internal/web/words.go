package web

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/dustin/go-humanize"

	"github.com/hivemem/hivemem/internal/app"
)

// This file holds what the dashboard says in words: relative times, the
// manager panel and events as sentences. The JSON API keeps its fields;
// only the pages read differently. app.js's relTime mirrors relTime.

// relTime says how long ago (or how soon) t is from now: "just now",
// "3 minutes ago", "in 2 hours"; "never" for the zero time.
func relTime(t, now time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := now.Sub(t)
	future := d < 0
	if future {
		d = -d
	}
	if d < 10*time.Second {
		if future {
			return "in a moment"
		}
		return "just now"
	}
	var s string
	switch {
	case d < time.Minute:
		s = plural(int(d/time.Second), "second")
	case d < time.Hour:
		s = plural(int(d/time.Minute), "minute")
	case d < 24*time.Hour:
		s = plural(int(d/time.Hour), "hour")
	case d < 45*24*time.Hour:
		s = plural(int(d/(24*time.Hour)), "day")
	default:
		return t.UTC().Format("2006-01-02")
	}
	if future {
		return "in " + s
	}
	return s + " ago"
}

// plural is "1 file", "2 files".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// seconds says a duration in seconds the way a person reads it: "0.04 s",
// "1.2 s", "12 s", and from two minutes on a short duration ("3m", "1h30m").
func seconds(s float64) string {
	switch {
	case s < 0 || math.IsNaN(s):
		return "—"
	case s < 1:
		return strconv.FormatFloat(roundTo(s, 2), 'f', -1, 64) + " s"
	case s < 10:
		return strconv.FormatFloat(roundTo(s, 1), 'f', -1, 64) + " s"
	case s < 120:
		return strconv.FormatFloat(math.Round(s), 'f', 0, 64) + " s"
	}
	return duration(time.Duration(s) * time.Second)
}

func roundTo(f float64, places int) float64 {
	p := math.Pow(10, float64(places))
	v := math.Round(f*p) / p
	if v == 0 && f > 0 {
		return 1 / p // never "0 s" for something that took time
	}
	return v
}

// onOff is a switch as the page says it.
func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// fact is one line of the manager panel: a label, the words, and a time
// the page shows relative (kept current by app.js) after the words.
type fact struct {
	Label string
	Text  string
	At    time.Time
	Bad   bool // a line that needs a look
}

// managerFacts is the manager's status in words, in the order a person
// asks: is it on, is it keeping up, when did it last act, what went wrong.
func managerFacts(ms *app.ManagerStatus, now time.Time) []fact {
	if ms == nil {
		return nil
	}
	out := []fact{{Label: "Mining", Text: onOff(ms.Mining)}}
	if !ms.Mining {
		out[0].Text = "off: nothing is mined or condensed (manager.mining in config.toml)"
		out[0].Bad = true
	}
	if !ms.Started.IsZero() {
		out = append(out, fact{Label: "Running since", At: ms.Started})
	}
	lag := fact{Label: "Mine lag", Text: "no change mined yet"}
	if !ms.LastMineLag.IsZero() || ms.MineLagSeconds > 0 {
		lag.Text, lag.At = seconds(ms.MineLagSeconds)+", finished", ms.LastMineLag
	}
	out = append(out, lag)
	switch {
	case ms.Pending == 0 && ms.UnminedAgeSeconds == 0:
		out = append(out, fact{Label: "Waiting to be mined", Text: "nothing"})
	case ms.UnminedAgeSeconds > 0:
		out = append(out, fact{Label: "Waiting to be mined", Text: plural(ms.Pending, "agent") + ", oldest change " + seconds(ms.UnminedAgeSeconds) + " old",
			Bad: ms.UnminedAgeSeconds > 300})
	default:
		out = append(out, fact{Label: "Waiting to be mined", Text: plural(ms.Pending, "agent")})
	}
	dirs := "1 directory"
	if ms.Watching != 1 {
		dirs = strconv.Itoa(ms.Watching) + " directories"
	}
	out = append(out, fact{Label: "Watching", Text: dirs})
	for _, t := range []struct {
		label string
		at    time.Time
	}{{"Last scan", ms.LastScan}, {"Next scan", ms.NextScan}, {"Last reflector pass", ms.LastPass}, {"Next reflector pass", ms.NextPass}} {
		if !t.at.IsZero() {
			out = append(out, fact{Label: t.label, At: t.at})
		}
	}
	pr := fact{Label: "Problems", Text: "none"}
	if n := len(ms.Problems); n > 0 {
		p := ms.Problems[n-1]
		pr = fact{Label: "Problems", Text: fmt.Sprintf("%d; the last: %s: %s,", n, p.What, p.Error), At: p.Time, Bad: true}
	}
	out = append(out, pr)
	proc := "pid " + strconv.Itoa(ms.PID)
	if ms.Version != "" {
		proc += " · " + ms.Version
	}
	if ms.HTTP != "" {
		proc += " · " + ms.HTTP
	}
	return append(out, fact{Label: "Process", Text: proc})
}

// eventSentence says what an event did, without its agent and time (the
// page shows those beside it): "mined its memory: 3 drawers added, 41
// drawers unchanged, 0.04 s". A kind it does not know is said generically
// from its data.
func eventSentence(ev app.EventItem) string {
	d := eventData{ev.Data}
	var s string
	switch ev.Kind {
	case "mine":
		s = "mined its memory: " + joinNonEmpty(
			countIf(d.num("drawersAdded"), "drawer", "added", true),
			countIf(d.num("drawersRemoved"), "drawer", "removed", false),
			countIf(d.num("filesRemoved"), "file", "removed", false),
			countIf(d.num("drawersKept"), "drawer", "unchanged", false))
		if d.has("seconds") {
			s += ", " + seconds(d.num("seconds"))
		}
		if by := d.str("by"); by != "" {
			s += " (after " + by + ")"
		}
	case "mine-failed":
		s = "mining failed"
		if e := d.str("error"); e != "" {
			s += ": " + e
		}
		s += "; it is retried with a growing delay"
	case "condense":
		s = "condensed " + sizeChange(d) + ": " + joinNonEmpty(
			countIf(d.num("evicted"), "section", "moved to the archive", true),
			countIf(d.num("kept"), "section", "kept", true),
			countIf(d.num("hoisted"), "pinned fact", "hoisted", false))
		s += extras(d)
	case "condense-abort":
		s = "condensation stopped"
		if ev.Reason != "" {
			s += " (" + words(ev.Reason) + ")"
		}
		if det := d.str("detail"); det != "" {
			s += ": " + det
		}
		if d.has("failures") {
			s += "; failure " + d.int("failures") + " in a row"
		}
	case "restore":
		s = "restored backup " + d.str("backup")
		if d.has("oldBytes") && d.has("newBytes") {
			s += " (" + sizeChange(d) + ")"
		}
		if pre := d.str("preRestoreBackup"); pre != "" {
			s += "; the replaced file is backup " + pre
		}
	case "supersede":
		s = "wrote " + quote(d.str("heading")) + ", which supersedes " + quote(d.str("supersedes"))
	case "forget":
		s = "forgot " + or(quote(d.str("heading")), "lines "+d.str("lines")) + " of " + d.str("source")
		if k := d.str("kept"); k != "" {
			s += "; its text is kept in " + k
		}
	case "unpin":
		s = "unpinned " + quote(d.str("fact"))
		if a := d.str("archive"); a != "" {
			s += "; it is kept in " + a
		}
	case "pin-replace":
		s = "replaced the pinned fact " + quote(d.str("fact")) + " with " + quote(d.str("replaced_by"))
	case "purge":
		s = "purged a text for good from " + joinNonEmpty(
			countIf(d.num("places"), "place", "", true),
			countIf(d.num("agents"), "agent", "", false),
			countIf(d.num("drawers"), "drawer", "of the index", false))
	case "redact":
		s = "redacted " + secretCounts(d.m["redacted"])
		if k := secretCounts(d.m["kept"]); k != "no secrets" {
			s += " and kept " + k + " (allowed)"
		}
		if p := d.str("path"); p != "" {
			s += " in " + p
		}
		if by := d.str("by"); by != "" {
			s += " (" + words(by) + ")"
		}
	case "hook-error":
		s = "the " + or(d.str("hook"), "agent") + " hook failed"
		if ev.Reason != "" {
			s += ": " + ev.Reason
		}
		if a := d.str("agent"); a != "" {
			s += " (agent id " + quote(a) + ")"
		}
	case "session-expire":
		s = "removed the session file " + d.str("path")
		if ev.Reason != "" {
			s += ": " + ev.Reason
		}
	case "import":
		s = "imported " + plural(int(d.num("turns_added")), "turn")
		if f := d.str("format"); f != "" {
			s += " of a " + f + " conversation"
		}
		if p := d.str("path"); p != "" {
			s += " into " + p
		}
	default:
		return genericSentence(ev)
	}
	return s
}

// genericSentence says an event of a kind the dashboard does not know:
// its kind and reason in words, then its data as "key words value".
func genericSentence(ev app.EventItem) string {
	s := words(ev.Kind)
	if ev.Reason != "" {
		s += " (" + ev.Reason + ")"
	}
	keys := make([]string, 0, len(ev.Data))
	for k := range ev.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		if v := valueWords(ev.Data[k]); v != "" {
			parts = append(parts, words(k)+" "+v)
		}
	}
	if len(parts) > 0 {
		s += ": " + strings.Join(parts, ", ")
	}
	return s
}

// words turns an identifier into words: "drawersAdded" → "drawers added",
// "turns_added" → "turns added", "condense-abort" → "condense abort".
func words(id string) string {
	var b strings.Builder
	prev := rune(0)
	for _, r := range id {
		switch {
		case r == '_' || r == '-':
			r = ' '
		case unicode.IsUpper(r):
			if prev != 0 && prev != ' ' && !unicode.IsUpper(prev) {
				b.WriteByte(' ')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
		prev = r
	}
	return b.String()
}

// valueWords says a logged value: numbers without float noise, switches
// as yes/no, lists by their length, objects as "key value" pairs.
func valueWords(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		if x {
			return "yes"
		}
		return "no"
	case float64:
		return number(x)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case []any:
		return plural(len(x), "item")
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			parts = append(parts, words(k)+" "+valueWords(x[k]))
		}
		return strings.Join(parts, ", ")
	}
	return fmt.Sprint(v)
}

// number prints a float as a person writes it: 3, 0.04, 1.2.
func number(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatInt(int64(f), 10)
	}
	if math.Abs(f) < 1 {
		return strconv.FormatFloat(f, 'g', 2, 64)
	}
	return strconv.FormatFloat(math.Round(f*100)/100, 'f', -1, 64)
}

// eventData reads an event's data, which is JSON-decoded (numbers are
// float64) when it comes from the log.
type eventData struct{ m map[string]any }

func (d eventData) has(k string) bool { _, ok := d.m[k]; return ok }

func (d eventData) num(k string) float64 {
	switch x := d.m[k].(type) {
	case float64:
		return x
	case int:
		return float64(x)
	case int64:
		return float64(x)
	}
	return 0
}

func (d eventData) int(k string) string { return number(d.num(k)) }

func (d eventData) str(k string) string {
	switch x := d.m[k].(type) {
	case nil:
		return ""
	case string:
		return x
	default:
		return valueWords(x)
	}
}

// countIf is "3 drawers added"; "" when n is 0 unless always.
func countIf(n float64, noun, verb string, always bool) string {
	if n == 0 && !always {
		return ""
	}
	s := plural(int(n), noun)
	if verb != "" {
		s += " " + verb
	}
	return s
}

func joinNonEmpty(parts ...string) string {
	out := parts[:0:0]
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, ", ")
}

// sizeChange is "12 KiB → 4.1 KiB".
func sizeChange(d eventData) string {
	if !d.has("oldBytes") {
		return "the file"
	}
	s := humanize.IBytes(uint64(d.num("oldBytes")))
	if d.has("newBytes") {
		s += " → " + humanize.IBytes(uint64(d.num("newBytes")))
	}
	return s
}

// extras are a condensation's summariser and time: " (extractive, 1.2 s)".
func extras(d eventData) string {
	var parts []string
	if s := d.str("summarizer"); s != "" {
		parts = append(parts, s+" summary")
	}
	if d.has("durationMs") {
		parts = append(parts, seconds(d.num("durationMs")/1000))
	}
	if f, _ := d.m["force"].(bool); f {
		parts = append(parts, "forced")
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// secretCounts is "2 secrets (1 aws key, 1 password)" from a count by kind.
func secretCounts(v any) string {
	m, _ := v.(map[string]any)
	if mi, ok := v.(map[string]int); ok {
		m = make(map[string]any, len(mi))
		for k, n := range mi {
			m[k] = float64(n)
		}
	}
	total := 0
	keys := make([]string, 0, len(m))
	for k := range m {
		total += int(eventData{m}.num(k))
		keys = append(keys, k)
	}
	if total == 0 {
		return "no secrets"
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, number(eventData{m}.num(k))+" "+words(k))
	}
	return plural(total, "secret") + " (" + strings.Join(parts, ", ") + ")"
}

// quote puts a heading or fact in typographic quotes; "" stays "".
func quote(s string) string {
	if s == "" {
		return ""
	}
	return "“" + s + "”"
}

func or(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}
