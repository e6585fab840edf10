package purge

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hivemem/hivemem/internal/home"
)

// The rolling hash finds exactly what bytes.Index finds, at every offset,
// for texts of several lengths in random data.
func TestMatcherFindsWhatIndexFinds(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := "ab\n #-"
	for trial := range 200 {
		data := make([]byte, 50+rng.IntN(400))
		for i := range data {
			data[i] = alphabet[rng.IntN(len(alphabet))]
		}
		l := MinLen + rng.IntN(6)
		at := rng.IntN(len(data) - l)
		text := string(data[at : at+l])
		m, err := Ephemeral([]Text{{Text: text}})
		if err != nil {
			t.Fatal(err)
		}
		var want []int
		for off := 0; ; {
			i := bytes.Index(data[off:], []byte(text))
			if i < 0 {
				break
			}
			want = append(want, off+i)
			off += i + 1
		}
		// Overlapping occurrences merge into one span: compare coverage.
		covered := make([]bool, len(data))
		for _, w := range want {
			for i := w; i < w+l; i++ {
				covered[i] = true
			}
		}
		got := make([]bool, len(data))
		for _, s := range m.Find(data) {
			for i := s.Start; i < s.End; i++ {
				got[i] = true
			}
		}
		for i := range data {
			if got[i] != covered[i] {
				t.Fatalf("trial %d: %q in %q: byte %d covered %v, want %v", trial, text, data, i, got[i], covered[i])
			}
		}
	}
}

func TestScrubText(t *testing.T) {
	secret := "sk-live-ABCDEF123"
	for _, c := range []struct {
		name, in, want string
		section        bool
	}{
		{"a line that is only the text goes", "a\n" + secret + "\nb\n", "a\nb\n", false},
		{"the last line without newline goes", "a\n" + secret, "a\n", false},
		{"inside a line it is replaced", "key " + secret + " here\n", "key " + Marker + " here\n", false},
		{"twice in a line", secret + " and " + secret + "\n", Marker + " and " + Marker + "\n", false},
		{"a section heading takes its section", "## keep\nx\n## " + secret + "\nshort\nok\n### sub\ny\n## next\nz\n", "## keep\nx\n## next\nz\n", true},
		{"a section heading in a quote is replaced", "> supersedes: " + secret + "\n", "> supersedes: " + Marker + "\n", true},
		{"nothing to take", "nothing here\n", "nothing here\n", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := Ephemeral([]Text{{Text: secret, Section: c.section}})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := ScrubText([]byte(c.in), m)
			if string(got) != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// The event log is searched decoded: a text JSON escapes is found, and
// the line stays JSON.
func TestScrubJSONLinesFindsEscapedText(t *testing.T) {
	secret := `pw"<x&y>"1`
	m, err := Ephemeral([]Text{{Text: secret}})
	if err != nil {
		t.Fatal(err)
	}
	in := "{\"kind\":\"unpin\",\"fact\":\"the pw\\\"\\u003cx\\u0026y\\u003e\\\"1 is\"}\n{\"kind\":\"mine\"}\nnot json " + secret + "\n"
	got, n := ScrubJSONLines([]byte(in), m)
	if n != 2 {
		t.Errorf("found %d, want 2", n)
	}
	want := "{\"fact\":\"the " + Marker + " is\",\"kind\":\"unpin\"}\n{\"kind\":\"mine\"}\nnot json " + Marker + "\n"
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// A recorded purge is found again from its hashes alone: the state file
// holds no byte of the text, and the block list redacts it.
func TestStateKeepsHashesNotText(t *testing.T) {
	dir := t.TempDir()
	st := Open(dir)
	secret := "sk-live-STATE-0042"
	if _, _, err := st.Begin([]Text{{Text: secret}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(Path(dir))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(secret)) || bytes.Contains(data, []byte("STATE-0042")) {
		t.Fatalf("the state file holds the text:\n%s", data)
	}
	if !Pending(dir) {
		t.Error("a begun purge is not pending")
	}
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.PendingMatcher().Find([]byte("x " + secret + " y")); len(got) != 1 || got[0].Start != 2 {
		t.Errorf("the recorded hashes find %v", got)
	}
	if err := st.Finish(); err != nil {
		t.Fatal(err)
	}
	if Pending(dir) {
		t.Error("a finished purge is still pending")
	}
	bl, err := LoadBlocklist(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, n := bl.Redact("say " + secret + "!"); n != 1 || got != "say "+Marker+"!" {
		t.Errorf("Redact = %q, %d", got, n)
	}
	if err := CheckText("the"); err == nil {
		t.Error("a 3-byte text is accepted")
	}
}

// ScrubHome cleans every kind of copy, leaves config.toml to the user,
// removes a set-aside index, overwrites leftovers in place and renames a
// file whose name holds the text; a dry run changes nothing.
func TestScrubHome(t *testing.T) {
	h := home.Home{Root: t.TempDir()}
	secret := "sk-live-HOME-1234"
	files := map[string]string{
		"hive/agents/alice/memory.md":                        "# alice\n## note\nkey " + secret + "\n",
		"hive/agents/bob/sessions/2026-" + secret + "-ab.md": "turn " + secret + "\n",
		"hive/archive/alice/2026-12.md":                      secret + "\n",
		"hive/backups/20261206T000000Z/alice/memory.md":      "x " + secret + "\n",
		"hive/forgotten/alice/2026-12.md":                    secret + "\n",
		"hive/log.jsonl":                                     `{"fact":"` + secret + `"}` + "\n",
		"hive/agents/alice/.memory.md.123.tmp":               "tmp " + secret + "\n",
		"palace/palace.db.damaged-20261206T000000Z":          "SQLite " + secret,
		"palace/palace.db":                                   "live index " + secret, // the store's to scrub
		"config.toml":                                        "api_key = \"" + secret + "\"\n",
		"hive/agents/alice/other.md":                         "nothing\n",
	}
	for rel, body := range files {
		p := filepath.Join(h.Root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m, err := Ephemeral([]Text{{Text: secret}})
	if err != nil {
		t.Fatal(err)
	}
	dry, err := ScrubHome(context.Background(), h, m, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(dry.Places) != 8 || len(dry.Left) != 1 {
		t.Errorf("dry run: %d places %+v, left %v", len(dry.Places), dry.Places, dry.Left)
	}
	for rel, body := range files {
		if got, err := os.ReadFile(filepath.Join(h.Root, rel)); err != nil || string(got) != body {
			t.Errorf("a dry run changed %s", rel)
		}
	}
	rep, err := ScrubHome(context.Background(), h, m, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rep.Agents(), ","); got != "alice,bob" {
		t.Errorf("agents = %s", got)
	}
	var left []string
	_ = filepath.WalkDir(h.Root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := os.ReadFile(p)
		if bytes.Contains(b, []byte(secret)) || strings.Contains(p, secret) {
			left = append(left, h.Rel(p))
		}
		return nil
	})
	if strings.Join(left, " ") != "config.toml palace/palace.db" {
		t.Errorf("the text is left in %v, want only config.toml and the live index", left)
	}
	if got, _ := os.ReadFile(filepath.Join(h.Root, "hive/agents/alice/memory.md")); string(got) != "# alice\n## note\nkey "+Marker+"\n" {
		t.Errorf("memory.md = %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(h.Root, "hive/agents/alice/.memory.md.123.tmp")); len(got) != len(files["hive/agents/alice/.memory.md.123.tmp"]) {
		t.Errorf("a leftover changed length: %q", got)
	}
	if _, err := os.Stat(filepath.Join(h.Root, "palace/palace.db.damaged-20261206T000000Z")); err == nil {
		t.Error("the set-aside index holding the text is still there")
	}
	if _, err := os.Stat(filepath.Join(h.Root, "hive/agents/bob/sessions/2026-purged-ab.md")); err != nil {
		t.Errorf("the session named after the text is not renamed: %v", err)
	}
}
