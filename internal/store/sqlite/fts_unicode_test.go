package sqlite

import (
	"slices"
	"testing"

	"github.com/hivemem/hivemem/internal/store/fts"
)

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
