package sqlite

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/store/fts"
)

// goTokens tokenizes s the way the lexical index does: the Go port for
// ASCII, SQLite's tokenizer otherwise.
func goTokens(t *testing.T, tk *tokenizer, s string) []string {
	t.Helper()
	var out []string
	if asciiTokens(s, func(tok string) { out = append(out, tok) }) {
		return out
	}
	toks, err := tk.tokenize(t.Context(), []string{s})
	if err != nil {
		t.Fatal(err)
	}
	return toks[0]
}

// TestTokenizerMatchesFTS5 holds the Go tokenizer to FTS5's own over
// English words with every suffix the stemmer knows, random ASCII strings,
// hand-picked awkward text and the repository's own prose and code: the
// token streams must be identical.
func TestTokenizerMatchesFTS5(t *testing.T) {
	var tk tokenizer
	defer tk.close()
	texts := []string{
		"Running runs ran runner RUNNING", "caresses ponies ties caress cats", "feed agreed plastered bled motoring sing",
		"conflated troubled sized hopping tanned falling hissing fizzed failing filing", "happy sky", "relational conditional rational valenci hesitanci digitizer conformabli radicalli differentli vileli analogousli vietnamization predication operator feudalism decisiveness hopefulness callousness formaliti sensitiviti sensibiliti",
		"triplicate formative formalize electriciti electrical hopeful goodness", "revival allowance inference airliner gyroscopic adjustable defensible irritant replacement adjustment dependent adoption homologou communism activate angulariti homologous effective bowdlerize",
		"probate rate cease controll roll", "e.g. i.e. U.S.A. don't it's rock'n'roll state-of-the-art x86_64 v1.2.3 2026-11-29 10:30",
		"café naïve résumé Ærøskøbing Straße ŒUVRE ǅemal", "日本語のテキスト 中文 한국어", "emoji 🚀 rocket 👍🏽 thumbs", "e\u0301 combining a\u0308", "tab\tnew\nline\r\nzero\x00byte",
		strings.Repeat("a", 63) + " " + strings.Repeat("b", 64) + " " + strings.Repeat("ing", 22) + " " + strings.Repeat("ation", 13),
		"yyy yying ayy syzygy by bye eyed dying lying tying", "aing sing ting bing eed ed ies sses ss s es",
		"", "   ", "!!!", "ab", "AB12cd", "123456 007 3rd 4th 1990s",
	}
	words := strings.Fields("a e i o u y b c d l s z w x at bl iz ed ing eed ational tional enci anci izer logi bli alli entli eli ousli ization ation ator alism iveness fulness ousness aliti iviti biliti ical ness icate iciti ful ative alize al ance ence er ic able ible ant ement ment ent ion sion tion ou ism ate iti ous ive ize ll e s es ies sses y")
	rng := rand.New(rand.NewPCG(9, 9))
	const alpha = "abcdeilnorstuyzwxgvAEIOUY0123456789 -'._"
	for range 4000 {
		var sb strings.Builder
		for range 1 + rng.IntN(8) {
			switch rng.IntN(3) {
			case 0:
				for range 1 + rng.IntN(12) {
					sb.WriteByte(alpha[rng.IntN(len(alpha))])
				}
			case 1:
				for range 1 + rng.IntN(3) {
					sb.WriteString(words[rng.IntN(len(words))])
				}
			default:
				cons, vows := "bcdfghjklmnprstvwxyz", "aeiouy"
				for range 1 + rng.IntN(3) {
					sb.WriteByte(cons[rng.IntN(len(cons))])
					sb.WriteByte(vows[rng.IntN(len(vows))])
				}
				sb.WriteString(words[rng.IntN(len(words))])
			}
			sb.WriteByte(" .,;-'\t"[rng.IntN(7)])
		}
		texts = append(texts, sb.String())
	}
	// Real text: every line of the repository's Markdown and of this
	// package's Go source.
	files, _ := filepath.Glob("*.go")
	md, _ := filepath.Glob("../../../*.md")
	docs, _ := filepath.Glob("../../../docs/*.md")
	for _, name := range slices.Concat(files, md, docs) {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, strings.Split(string(b), "\n")...)
	}
	if len(md) == 0 {
		t.Error("README not found: the real-text part of the test is missing")
	}
	ascii := 0
	for lo := 0; lo < len(texts); lo += 500 {
		batch := texts[lo:min(lo+500, len(texts))]
		want, err := tk.tokenize(t.Context(), batch)
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range batch {
			if isASCII(s) {
				ascii++
			}
			if got := goTokens(t, &tk, s); !slices.Equal(got, want[i]) {
				t.Errorf("tokens of %q:\n go   %q\n fts5 %q", s, got, want[i])
			}
		}
	}
	t.Logf("%d texts, %d of them ASCII (tokenized in Go)", len(texts), ascii)
}

// TestUnicodeTokensMatchFTS5 holds fts.Tokens, the Go tokenizer the
// PostgreSQL backend indexes with, to SQLite's own on non-ASCII text: Latin
// with diacritics, other scripts, combining marks, numbers, ligatures.
func TestUnicodeTokensMatchFTS5(t *testing.T) {
	var tk tokenizer
	defer tk.close()
	texts := []string{
		"le café était fermé", "ÉTAIT", "naïve résumé Ærøskøbing Straße ŒUVRE ǅemal", "Ø ø Đ đ Ł ł Ħ ĳ Ǆ",
		"привет мир, как дела", "Йогурт ёжик ЁЛКА", "ΣΊΣΥΦΟΣ ά έ", "日本語のテキスト 中文 한국어", "emoji 🚀🔥 rocket 👍🏽",
		"e\u0301 combining a\u0308", "a\u0301b", "a\u0300\u0301b", "a\u0340b", "a\u0360b", "x\u0483y", "a\u05b0b",
		"ﬁ ligature", "ⅷ ½ ² ٣٤", "İstanbul ıi", "\u200b", "a\u200bb", "ａｂｃ ＡＢＣ", "𝐀𝐁", "Ğüneş çalışıyor",
		"Crème brûlée à la française", "Ångström Öl Übermäßig", "Zürich–Genève — «quotes» ‘single’ “double”",
		"tab\tnew\nline", "mixed ASCII and ünïcödé running runners", "façade coöperate rôle",
	}
	want, err := tk.tokenize(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range texts {
		if got := fts.Tokens(s); !slices.Equal(got, want[i]) && !(len(got) == 0 && len(want[i]) == 0) {
			t.Errorf("tokens of %q:\n go   %q\n fts5 %q", s, got, want[i])
		}
	}
}
