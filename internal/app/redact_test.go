package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/app/apptest"
	"github.com/hivemem/hivemem/internal/hometest"
	"github.com/hivemem/hivemem/internal/redact/redacttest"
)

// secretsAndLookalikes are one secret of each generated kind and one
// lookalike of each kind, from seed.
func secretsAndLookalikes(seed uint64) ([]redacttest.Secret, []redacttest.Lookalike) {
	g := redacttest.New(seed)
	return g.Secrets(len(redacttest.Kinds())), g.Lookalikes(len(redacttest.LookalikeKinds()))
}

func needles(ss []redacttest.Secret) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Needles()...)
	}
	return out
}

// assertHomeClean fails when a secret is in any byte of the home, and
// when a lookalike is missing from the file it was written to.
func assertHomeClean(t *testing.T, root string, ss []redacttest.Secret, looks []redacttest.Lookalike, written string) {
	t.Helper()
	if n := hometest.AssertNoneInHome(t, root, needles(ss)...); n < 3 {
		t.Fatalf("the home has %d files: nothing was written?", n)
	}
	data, err := os.ReadFile(written)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range looks {
		if !strings.Contains(string(data), l.Value) {
			t.Errorf("lookalike %s (%q) is not in %s as written", l.Kind, l.Value, filepath.Base(written))
		}
	}
	if !strings.Contains(string(data), "[redacted: ") {
		t.Errorf("%s has no marker", written)
	}
}

func logHas(t *testing.T, a *app.App, s string) bool {
	t.Helper()
	data, err := os.ReadFile(a.Home().LogPath())
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(string(data), s)
}

// TestRememberKeepsSecretsOutOfEveryByteOfTheHome: a note holding a
// secret of every kind and every lookalike: the secrets are in no file of
// the home afterwards (memory file, index, WAL, embedding cache, event
// log), the lookalikes are kept, the result counts what was redacted and
// an event says so.
func TestRememberKeepsSecretsOutOfEveryByteOfTheHome(t *testing.T) {
	ss, looks := secretsAndLookalikes(101)
	a := apptest.ConfiguredApp(t, "")
	res, err := a.Remember(context.Background(), app.RememberRequest{Agent: "alice", Heading: "staging setup", Text: redacttest.Note(ss, looks)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Redacted.Total() < len(ss) || res.Kept != nil {
		t.Errorf("result counts %v redacted, %v kept; want at least %d redacted", res.Redacted, res.Kept, len(ss))
	}
	if !logHas(t, a, `"kind":"redact"`) {
		t.Error("no redact event")
	}
	// The index sees the markers: search finds the note by them.
	hits, err := a.Search(context.Background(), app.SearchRequest{Query: "redacted aws-access-key"})
	if err != nil || len(hits.Hits) == 0 {
		t.Errorf("search for the marker: %v, %d hits", err, len(hits.Hits))
	}
	a.Close()
	assertHomeClean(t, a.Home().Root, ss, looks, apptest.MemoryPath(t, a, "alice"))
}

// TestRedactionRunsBeforeTheDuplicateCheck: the same note with another
// secret in the same place is a repeat (both read the same once
// redacted), so nothing is written twice.
func TestRedactionRunsBeforeTheDuplicateCheck(t *testing.T) {
	g := redacttest.New(7)
	a := apptest.ConfiguredApp(t, "[embedder]\nprovider = \"none\"\n")
	ctx := context.Background()
	note := func() string { return "The deploy bot uses " + g.Secret("github-pat").Value + " for the release job." }
	if _, err := a.Remember(ctx, app.RememberRequest{Agent: "bob", Text: note()}); err != nil {
		t.Fatal(err)
	}
	res, err := a.Remember(ctx, app.RememberRequest{Agent: "bob", Text: note()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Duplicate == nil {
		t.Errorf("the second note was written: %+v", res)
	}
}

// TestPinRedactsAndReplacesByTheRedactedFact: a pinned fact is redacted;
// pin --replaces names it as it was typed (with its secret) and finds it.
func TestPinRedactsAndReplacesByTheRedactedFact(t *testing.T) {
	g := redacttest.New(8)
	a := apptest.ConfiguredApp(t, "[embedder]\nprovider = \"none\"\n")
	ctx := context.Background()
	key := g.Secret("stripe-key").Value
	fact := "payments use " + key
	res, err := a.Pin(ctx, app.PinRequest{Agent: "carol", Fact: fact})
	if err != nil {
		t.Fatal(err)
	}
	if res.Redacted["stripe-key"] != 1 || strings.Contains(res.Fact, key) {
		t.Fatalf("pin result %+v", res)
	}
	res, err = a.Pin(ctx, app.PinRequest{Agent: "carol", Fact: "payments use the vault's key", Replaces: fact})
	if err != nil {
		t.Fatal(err)
	}
	if res.Replaced == "" {
		t.Errorf("the redacted fact was not replaced: %+v", res)
	}
	hometest.AssertNoneInHome(t, a.Home().Root, key)
}

// TestKeepSecretsWritesThemAndSaysSo: the per-write escape hatch keeps
// the value and the result names what was kept.
func TestKeepSecretsWritesThemAndSaysSo(t *testing.T) {
	g := redacttest.New(9)
	a := apptest.ConfiguredApp(t, "[embedder]\nprovider = \"none\"\n")
	key := g.Secret("aws-access-key").Value
	res, err := a.Remember(context.Background(), app.RememberRequest{Agent: "dan", Text: "fixture key " + key, KeepSecrets: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Kept["aws-access-key"] != 1 || res.Redacted != nil {
		t.Errorf("result %+v, want the key counted as kept", res.Redaction)
	}
	if !strings.Contains(res.Redaction.String(), "keep_secrets") {
		t.Errorf("the result's text does not say why: %q", res.Redaction.String())
	}
	if !strings.Contains(apptest.ReadMemory(t, a, "dan"), key) {
		t.Error("the kept key is not in the file")
	}
}

// TestRedactSettingsAllowAndOff: an allow-listed value is kept; with
// redact.enabled = false nothing is redacted; status shows the setting.
func TestRedactSettingsAllowAndOff(t *testing.T) {
	g := redacttest.New(10)
	fake, real := g.Secret("github-pat").Value, g.Secret("github-pat").Value
	a := apptest.ConfiguredApp(t, "[embedder]\nprovider = \"none\"\n[redact]\nallow = [\""+fake+"\"]\n")
	ctx := context.Background()
	res, err := a.Remember(ctx, app.RememberRequest{Agent: "eve", Text: "fixture " + fake + " and real " + real})
	if err != nil {
		t.Fatal(err)
	}
	mem := apptest.ReadMemory(t, a, "eve")
	if !strings.Contains(mem, fake) || strings.Contains(mem, real) || res.Redacted.Total() != 1 {
		t.Errorf("allow-listed value: counts %v, file:\n%s", res.Redacted, mem)
	}
	st, err := a.Status(ctx, app.StatusRequest{})
	if err != nil || !st.Redact.Enabled || st.Redact.Allow != 1 {
		t.Errorf("status %+v, %v", st.Redact, err)
	}

	off := apptest.ConfiguredApp(t, "[embedder]\nprovider = \"none\"\n[redact]\nenabled = false\n")
	res, err = off.Remember(ctx, app.RememberRequest{Agent: "eve", Text: "real " + real})
	if err != nil {
		t.Fatal(err)
	}
	if res.Redaction.Any() || !strings.Contains(apptest.ReadMemory(t, off, "eve"), real) {
		t.Errorf("redaction off still redacted: %+v", res.Redaction)
	}
	if st, _ := off.Status(ctx, app.StatusRequest{}); st.Redact.Enabled || !strings.Contains(st.Redact.String(), "off") {
		t.Errorf("status says %q", st.Redact)
	}
}

// TestImportKeepsSecretsOutOfEveryByteOfTheHome: a Claude Code transcript
// with a secret of every kind among lookalikes.
func TestImportKeepsSecretsOutOfEveryByteOfTheHome(t *testing.T) {
	ss, looks := secretsAndLookalikes(102)
	a := apptest.ConfiguredApp(t, "")
	src := filepath.Join(t.TempDir(), "session.jsonl")
	if err := os.WriteFile(src, redacttest.New(102).Transcript(ss, looks), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := a.Import(context.Background(), app.ImportRequest{Agent: "alice", Format: "claude-code", Paths: []string{src}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sessions) != 1 || res.TurnsAdded == 0 || res.MineErr != nil {
		t.Fatalf("import: %+v", res)
	}
	total := 0
	for _, n := range res.Redacted {
		total += n
	}
	if total < len(ss) {
		t.Errorf("redacted %v, want at least %d", res.Redacted, len(ss))
	}
	a.Close()
	assertHomeClean(t, a.Home().Root, ss, looks, res.Sessions[0].Path)
}

// TestMinerRedactsWhatAnAgentAppendedByHand: a secret appended to
// memory.md without hivemem is redacted in the file before it is
// indexed, and an event names the file, the line and the kind.
func TestMinerRedactsWhatAnAgentAppendedByHand(t *testing.T) {
	ss, looks := secretsAndLookalikes(103)
	a := apptest.MinedApp(t, map[string]string{"alice": "# Memory\n\n## 2026-12-01 — start\nnothing yet\n"}, false)
	path := apptest.MemoryPath(t, a, "alice")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("\n## 2026-12-05 — staging\n" + redacttest.Note(ss, looks)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := a.Mine(context.Background(), app.MineRequest{Agent: "alice"}); err != nil {
		t.Fatal(err)
	}
	if !logHas(t, a, `"by":"mine"`) || !logHas(t, a, `"line":`) {
		t.Error("no redact event naming the lines")
	}
	// Mining again finds nothing more to do.
	rep, err := a.Mine(context.Background(), app.MineRequest{Agent: "alice"})
	if err != nil || rep.Report.Changed != 0 {
		t.Errorf("second mine: %+v, %v", rep.Report, err)
	}
	a.Close()
	assertHomeClean(t, a.Home().Root, ss, looks, path)
}

// TestMinerDoesNotWriteFilesOutsideTheHome: a directory mined by path
// is never rewritten, but its secrets are not indexed.
func TestMinerDoesNotWriteFilesOutsideTheHome(t *testing.T) {
	g := redacttest.New(11)
	key := g.Secret("openai-api-key").Value
	dir := t.TempDir()
	file := filepath.Join(dir, "notes.md")
	content := "# notes\n\n## keys\nOPENAI_API_KEY=" + key + "\n"
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	a := apptest.ConfiguredApp(t, "[embedder]\nprovider = \"none\"\n")
	if _, err := a.Mine(context.Background(), app.MineRequest{Path: dir, Options: app.MineOptions{Wing: "notes"}}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(file); string(b) != content {
		t.Errorf("a file outside the home was rewritten:\n%s", b)
	}
	a.Close()
	hometest.AssertNoneInHome(t, a.Home().Root, key)
}

// TestScanListsSecretsWithoutTheirValues: secrets written while
// redaction was off are found by file, line and kind; the JSON of the
// result holds no value.
func TestScanListsSecretsWithoutTheirValues(t *testing.T) {
	g := redacttest.New(12)
	jwt, npm := g.Secret("jwt").Value, g.Secret("npm-token").Value
	a := apptest.ConfiguredApp(t, "[embedder]\nprovider = \"none\"\n[redact]\nenabled = false\n")
	ctx := context.Background()
	if _, err := a.Remember(ctx, app.RememberRequest{Agent: "zed", Heading: "tokens", Text: "first line\nsession " + jwt + "\nnpm " + npm}); err != nil {
		t.Fatal(err)
	}
	res, err := a.Scan(ctx, app.ScanRequest{})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, f := range res.Findings {
		if f.File != "hive/agents/zed/memory.md" || f.Line < 2 || len(f.Hash) != 64 {
			t.Errorf("finding %+v", f)
		}
		kinds[f.Kind]++
	}
	if kinds["jwt"] != 1 || kinds["npm-token"] != 1 {
		t.Errorf("found %v, want a jwt and an npm token", kinds)
	}
	out := mustJSON(t, res)
	if strings.Contains(out, jwt) || strings.Contains(out, npm) || strings.Contains(out, res.Findings[0].Hash) {
		t.Errorf("the scan's JSON shows a value or a hash: %s", out)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// issueKinds are the 14 kinds of secrets of issue #29's report: cloud
// keys, GitHub and Slack tokens, LLM provider keys, a payment key, a
// database URL with its password, a JWT, a private key, an API key in an
// environment assignment, a webhook signing secret.
var issueKinds = []string{
	"aws-access-key", "aws-secret-key", "google-api-key", "github-pat", "slack-bot-token", "openai-api-key",
	"anthropic-api-key", "stripe-key", "postgres-url-password", "jwt", "private-key", "generic-assignment",
	"webhook-signing-secret", "slack-webhook",
}

// issueLookalikes are the lookalikes the issue names: commit SHAs, UUIDs,
// sha256 digests, image digests, npm integrity hashes, ARNs with example
// account ids, colours, versions.
var issueLookalikes = []string{"commit-sha", "uuid", "sha256-digest", "image-digest", "npm-integrity", "example-arn", "hex-colour", "semver"}

// TestNoteAndTranscriptLeaveNoSecretInTheHome: a remembered note and an
// imported Claude Code transcript, each holding the issue's 14 secrets
// among its 8 kinds of lookalikes, in one home with the embedder on: 14
// of 14 secrets are in no byte of the home (files, index, WAL, embedding
// cache, event log), 8 of 8 lookalikes are kept.
func TestNoteAndTranscriptLeaveNoSecretInTheHome(t *testing.T) {
	g := redacttest.New(1429)
	var ss []redacttest.Secret
	var looks []redacttest.Lookalike
	mk := func() ([]redacttest.Secret, []redacttest.Lookalike) {
		var s []redacttest.Secret
		var l []redacttest.Lookalike
		for _, k := range issueKinds {
			s = append(s, g.Secret(k))
		}
		for _, k := range issueLookalikes {
			l = append(l, g.Lookalike(k))
		}
		ss, looks = append(ss, s...), append(looks, l...)
		return s, l
	}
	a := apptest.ConfiguredApp(t, "")
	ctx := context.Background()
	ns, nl := mk()
	rem, err := a.Remember(ctx, app.RememberRequest{Agent: "alice", Heading: "staging", Text: redacttest.Note(ns, nl)})
	if err != nil {
		t.Fatal(err)
	}
	ts, tl := mk()
	src := filepath.Join(t.TempDir(), "5e1f0c2a.jsonl")
	if err := os.WriteFile(src, g.Transcript(ts, tl), 0o644); err != nil {
		t.Fatal(err)
	}
	imp, err := a.Import(ctx, app.ImportRequest{Agent: "alice", Format: "auto", Paths: []string{src}})
	if err != nil || imp.MineErr != nil || len(imp.Sessions) != 1 {
		t.Fatalf("import: %+v, %v", imp, err)
	}
	if rem.Redacted.Total() < len(issueKinds) {
		t.Errorf("remember redacted %v, want %d secrets at least", rem.Redacted, len(issueKinds))
	}
	a.Close()
	hometest.AssertNoneInHome(t, a.Home().Root, needles(ss)...)
	var hive string
	for _, p := range []string{apptest.MemoryPath(t, a, "alice"), imp.Sessions[0].Path} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		hive += string(b)
	}
	for _, l := range looks {
		if !strings.Contains(hive, l.Value) {
			t.Errorf("lookalike %s %q was not kept", l.Kind, l.Value)
		}
	}
}

// BenchmarkImport times `import` of a Claude Code transcript of 600 turns
// (one secret in 20 turns, lookalikes throughout) into a fresh
// lexical-only home, with redaction on and off: the cost of redaction on
// import throughput. tokens/s counts the transcript's words.
func BenchmarkImport(b *testing.B) {
	g := redacttest.New(77)
	var ss []redacttest.Secret
	var looks []redacttest.Lookalike
	for i := 0; i < 30; i++ {
		ss = append(ss, g.Secrets(1)...)
	}
	looks = g.Lookalikes(600)
	data := g.Transcript(ss, looks)
	src := filepath.Join(b.TempDir(), "session.jsonl")
	if err := os.WriteFile(src, data, 0o644); err != nil {
		b.Fatal(err)
	}
	tokens := len(strings.Fields(string(data)))
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("redact=%v", on), func(b *testing.B) {
			cfg := fmt.Sprintf("[embedder]\nprovider = \"none\"\n[redact]\nenabled = %v\n", on)
			for b.Loop() {
				b.StopTimer()
				a := apptest.ConfiguredApp(b, cfg)
				b.StartTimer()
				res, err := a.Import(context.Background(), app.ImportRequest{Agent: "bench", Format: "claude-code", Paths: []string{src}})
				if err != nil || res.TurnsAdded == 0 {
					b.Fatalf("%+v, %v", res, err)
				}
			}
			b.ReportMetric(float64(tokens)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// TestImportRedactsOnlyWhatItWrites: a conversation without a title whose
// first turn holds a secret gets a file name without it; importing it
// again writes nothing and reports nothing redacted.
func TestImportRedactsOnlyWhatItWrites(t *testing.T) {
	g := redacttest.New(13)
	key := g.Secret("github-pat").Value
	src := filepath.Join(t.TempDir(), "chat.jsonl")
	line := `{"type":"user","sessionId":"0b0e2f51-4c55-4f5e-9a5b-0f1a2b3c4d5e","uuid":"u1","timestamp":"2026-12-05T10:00:00Z","message":{"role":"user","content":"` + key + ` is the deploy token"}}` + "\n"
	if err := os.WriteFile(src, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	a := apptest.ConfiguredApp(t, "[embedder]\nprovider = \"none\"\n")
	req := app.ImportRequest{Agent: "alice", Format: "claude-code", Paths: []string{src}}
	first, err := a.Import(context.Background(), req)
	if err != nil || first.Redacted["github-token"] != 1 {
		t.Fatalf("first import: redacted %v, %v", first.Redacted, err)
	}
	again, err := a.Import(context.Background(), req)
	if err != nil || again.TurnsAdded != 0 || again.Redacted != nil {
		t.Fatalf("second import: %d turns, redacted %v, %v", again.TurnsAdded, again.Redacted, err)
	}
	hometest.AssertNoneInHome(t, a.Home().Root, key, strings.ToLower(key[4:16])) // a file name is a slug
}
