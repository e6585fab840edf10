package web

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/eventlog"
)

func TestRelTimeSaysHowLongAgoInWords(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		ago  time.Duration
		want string
	}{
		{0, "just now"},
		{9 * time.Second, "just now"},
		{10 * time.Second, "10 seconds ago"},
		{59 * time.Second, "59 seconds ago"},
		{time.Minute, "1 minute ago"},
		{3*time.Minute + 40*time.Second, "3 minutes ago"},
		{time.Hour, "1 hour ago"},
		{23 * time.Hour, "23 hours ago"},
		{24 * time.Hour, "1 day ago"},
		{44 * 24 * time.Hour, "44 days ago"},
		{45 * 24 * time.Hour, "2026-10-22"},
		{-5 * time.Second, "in a moment"},
		{-4 * time.Minute, "in 4 minutes"},
		{-2 * time.Hour, "in 2 hours"},
	} {
		if got := relTime(now.Add(-c.ago), now); got != c.want {
			t.Errorf("relTime(now-%v) = %q, want %q", c.ago, got, c.want)
		}
	}
	if got := relTime(time.Time{}, now); got != "never" {
		t.Errorf("relTime(zero) = %q, want never", got)
	}
}

func TestSecondsSaysALagInSeconds(t *testing.T) {
	for _, c := range []struct {
		s    float64
		want string
	}{
		{0, "0 s"},
		{0.0001, "0.01 s"},
		{0.04121568, "0.04 s"},
		{1.234, "1.2 s"},
		{12.6, "13 s"},
		{119, "119 s"},
		{180, "3m"},
		{5400, "1h30m"},
	} {
		if got := seconds(c.s); got != c.want {
			t.Errorf("seconds(%v) = %q, want %q", c.s, got, c.want)
		}
	}
}

// jsonData is an event's data as it comes back from the log: numbers
// are float64, maps map[string]any.
func jsonData(t *testing.T, ev eventlog.Event) app.EventItem {
	t.Helper()
	l := eventlog.Open(t.TempDir() + "/log.jsonl")
	if err := l.Append(ev); err != nil {
		t.Fatal(err)
	}
	evs, err := l.Read(0, nil)
	if err != nil || len(evs) != 1 {
		t.Fatalf("read back: %v %v", evs, err)
	}
	return app.EventItem{Event: evs[0]}
}

// camelKey is a camelCase identifier, as the event data's keys are.
var camelKey = regexp.MustCompile(`\b[a-z]+[A-Z][a-zA-Z]*\b`)

func TestEventSentenceSaysEachKindInWords(t *testing.T) {
	for _, c := range []struct {
		ev   eventlog.Event
		want string
	}{
		{eventlog.Event{Kind: "mine", Agent: "alice", Data: map[string]any{"drawersAdded": 3, "drawersRemoved": 0, "drawersKept": 41, "embedded": 3, "filesRemoved": 0, "seconds": 0.04121568}},
			"mined its memory: 3 drawers added, 41 drawers unchanged, 0.04 s"},
		{eventlog.Event{Kind: "mine", Agent: "alice", Data: map[string]any{"drawersAdded": 1, "drawersRemoved": 2, "drawersKept": 0, "filesRemoved": 1, "seconds": 1.5, "by": "remember"}},
			"mined its memory: 1 drawer added, 2 drawers removed, 1 file removed, 1.5 s (after remember)"},
		{eventlog.Event{Kind: "mine-failed", Reason: "error", Data: map[string]any{"error": "disk full"}},
			"mining failed: disk full; it is retried with a growing delay"},
		{eventlog.Event{Kind: "condense", Data: map[string]any{"oldBytes": 20480, "newBytes": 6144, "sections": 16, "evicted": 10, "kept": 6, "hoisted": 2, "durationMs": 1234, "force": false, "summarizer": "extractive"}},
			"condensed 20 KiB → 6.0 KiB: 10 sections moved to the archive, 6 sections kept, 2 pinned facts hoisted (extractive summary, 1.2 s)"},
		{eventlog.Event{Kind: "condense-abort", Reason: "summarize-failed", Data: map[string]any{"detail": "claude-cli: exit status 1: rate limited", "failures": 2}},
			"condensation stopped (summarize failed): claude-cli: exit status 1: rate limited; failure 2 in a row"},
		{eventlog.Event{Kind: "restore", Data: map[string]any{"backup": "20261127T081500Z", "preRestoreBackup": "20261206T120000Z", "oldBytes": 2048, "newBytes": 4096}},
			"restored backup 20261127T081500Z (2.0 KiB → 4.0 KiB); the replaced file is backup 20261206T120000Z"},
		{eventlog.Event{Kind: "supersede", Data: map[string]any{"source": "hive/agents/a/memory.md", "heading": "Reviews need two approvals", "supersedes": "Reviews need one approval"}},
			"wrote “Reviews need two approvals”, which supersedes “Reviews need one approval”"},
		{eventlog.Event{Kind: "forget", Data: map[string]any{"source": "hive/agents/a/memory.md", "lines": "12-20", "kept": "hive/forgotten/a.md", "heading": "Old plan"}},
			"forgot “Old plan” of hive/agents/a/memory.md; its text is kept in hive/forgotten/a.md"},
		{eventlog.Event{Kind: "unpin", Data: map[string]any{"fact": "deploys on Fridays", "archive": "hive/agents/a/archive/2026-12.md"}},
			"unpinned “deploys on Fridays”; it is kept in hive/agents/a/archive/2026-12.md"},
		{eventlog.Event{Kind: "pin-replace", Data: map[string]any{"fact": "port 80", "replaced_by": "port 8080"}},
			"replaced the pinned fact “port 80” with “port 8080”"},
		{eventlog.Event{Kind: "purge", Data: map[string]any{"places": 5, "agents": 2, "drawers": 3}},
			"purged a text for good from 5 places, 2 agents, 3 drawers of the index"},
		{eventlog.Event{Kind: "redact", Data: map[string]any{"path": "hive/agents/a/memory.md", "by": "remember", "redacted": map[string]int{"aws-key": 1, "password": 2}}},
			"redacted 3 secrets (1 aws key, 2 password) in hive/agents/a/memory.md (remember)"},
		{eventlog.Event{Kind: "hook-error", Reason: "no such agent", Data: map[string]any{"hook": "session-start", "agent": "Bad!"}},
			"the session-start hook failed: no such agent (agent id “Bad!”)"},
		{eventlog.Event{Kind: "session-expire", Reason: "not written for 30 days (capture.retention_days)", Data: map[string]any{"path": "hive/agents/a/sessions/x.md"}},
			"removed the session file hive/agents/a/sessions/x.md: not written for 30 days (capture.retention_days)"},
		{eventlog.Event{Kind: "import", Data: map[string]any{"path": "hive/agents/a/sessions/x.md", "source": "chat.jsonl", "format": "claude", "turns_added": 4}},
			"imported 4 turns of a claude conversation into hive/agents/a/sessions/x.md"},
		{eventlog.Event{Kind: "app-start", Reason: "boot", Data: map[string]any{"pidFile": "run.pid", "oldBytes": 12.5, "ok": true, "list": []any{1, 2}}},
			"app start (boot): list 2 items, ok yes, old bytes 12.5, pid file run.pid"},
	} {
		t.Run(c.ev.Kind, func(t *testing.T) {
			got := eventSentence(jsonData(t, c.ev))
			if got != c.want {
				t.Errorf("sentence:\n got %q\nwant %q", got, c.want)
			}
			if k := camelKey.FindString(got); k != "" {
				t.Errorf("sentence %q holds a camelCase key %q", got, k)
			}
			if strings.Contains(got, "true") || strings.Contains(got, "false") {
				t.Errorf("sentence %q says true/false", got)
			}
		})
	}
}

func TestManagerFactsReadAsWords(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	ms := &app.ManagerStatus{Runtime: app.Runtime{PID: 4242, Version: "v1.2.0", HTTP: "127.0.0.1:7788",
		Started: now.Add(-3 * time.Hour), UptimeSeconds: 10800, Watching: 6, Pending: 2,
		MineLagSeconds: 0.8123, LastMineLag: now.Add(-2 * time.Minute), UnminedAgeSeconds: 12.4,
		LastScan: now.Add(-time.Minute), NextScan: now.Add(4 * time.Minute),
		Problems: []app.Problem{{Time: now.Add(-5 * time.Minute), What: "watcher", Error: "too many open files"}}},
		Mining: true}
	got := map[string]string{}
	for _, f := range managerFacts(ms, now) {
		s := f.Text
		if !f.At.IsZero() {
			s = strings.TrimSpace(s + " " + relTime(f.At, now))
		}
		got[f.Label] = s
	}
	want := map[string]string{
		"Mining":              "on",
		"Running since":       "3 hours ago",
		"Mine lag":            "0.81 s, finished 2 minutes ago",
		"Waiting to be mined": "2 agents, oldest change 12 s old",
		"Watching":            "6 directories",
		"Last scan":           "1 minute ago",
		"Next scan":           "in 4 minutes",
		"Problems":            "1; the last: watcher: too many open files, 5 minutes ago",
		"Process":             "pid 4242 · v1.2.0 · 127.0.0.1:7788",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %q, want %q", k, got[k], w)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected line %s = %q", k, got[k])
		}
	}
	ms.Mining, ms.Problems, ms.Pending, ms.UnminedAgeSeconds = false, nil, 0, 0
	off := managerFacts(ms, now)
	if !strings.HasPrefix(off[0].Text, "off") || !off[0].Bad {
		t.Errorf("mining off reads %+v", off[0])
	}
}

func TestSplitIconDrawsTheEmojiOfAMarkerHeading(t *testing.T) {
	for _, c := range []struct{ heading, icon, rest string }{
		{"📌 Durable facts (pinned — never condensed)", "pin", "Durable facts (pinned — never condensed)"},
		{"🗜 Condensed history", "clamp", "Condensed history"},
		{"🗜\uFE0F Condensed history", "clamp", "Condensed history"},
		{"📌", "", "📌"},
		{"Recent", "", "Recent"},
		{"Deploy 📌 notes", "", "Deploy 📌 notes"},
	} {
		icon, rest := splitIcon(c.heading)
		if icon != c.icon || rest != c.rest {
			t.Errorf("splitIcon(%q) = %q, %q; want %q, %q", c.heading, icon, rest, c.icon, c.rest)
		}
	}
}
