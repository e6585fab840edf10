package minilm

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/modelfetch"
)

// pieces returns the vocabulary strings of Encode's ids, for readable tests.
func pieces(t *testing.T, tok *Tokenizer, text string) string {
	t.Helper()
	byID := make(map[int]string, len(tok.vocab))
	for s, id := range tok.vocab {
		byID[int(id)] = s
	}
	var out []string
	for _, id := range tok.Encode(text) {
		out = append(out, byID[id])
	}
	return strings.Join(out, " ")
}

// TestTokenizerGolden compares with ids from the Hugging Face tokenizers
// library (testdata/gen_tokenizer_golden.mjs regenerates the file).
func TestTokenizerGolden(t *testing.T) {
	tok := testTokenizer(t)
	var cases []struct {
		Text string `json:"text"`
		IDs  []int  `json:"ids"`
	}
	readJSON(t, "testdata/tokenizer_golden.json", &cases)
	if len(cases) < 30 {
		t.Fatalf("golden file has only %d cases", len(cases))
	}
	for _, c := range cases {
		got := tok.Encode(c.Text)
		if !slices.Equal(got, c.IDs) {
			t.Errorf("Encode(%q)\n got  %v\n want %v", c.Text, got, c.IDs)
		}
		// Count is the untruncated word-piece count; it agrees with Encode
		// whenever the text fits the window.
		if n := tok.Count(c.Text); len(c.IDs) < Window && n != len(c.IDs)-2 {
			t.Errorf("Count(%q) = %d, want %d", c.Text, n, len(c.IDs)-2)
		}
	}
}

func TestTokenizerCases(t *testing.T) {
	tok := testTokenizer(t)
	tests := []struct {
		name, text, want string
	}{
		{"empty", "", "[CLS] [SEP]"},
		{"only spaces", " \t\n ", "[CLS] [SEP]"},
		{"lowercase", "HeLLo World", "[CLS] hello world [SEP]"},
		{"accents stripped", "café naïve Ångström", "[CLS] cafe naive ang ##strom [SEP]"},
		{"wordpiece", "unaffable", "[CLS] una ##ffa ##ble [SEP]"},
		{"punctuation split", "don't (e.g.)", "[CLS] don ' t ( e . g . ) [SEP]"},
		{"ascii symbols split", "a+b=c$d^e|f~g`h", "[CLS] a + b = c $ d ^ e | f ~ g ` h [SEP]"},
		{"unicode punctuation", "«hi»—ok", "[CLS] « hi » — ok [SEP]"},
		{"cjk padded", "東京abc", "[CLS] 東 京 abc [SEP]"},
		{"hiragana not padded", "ひらがな", "[CLS] ひ ##ら ##か ##な [SEP]"},
		{"emoji unknown", "hi 🙂", "[CLS] hi [UNK] [SEP]"},
		{"special token verbatim", "[CLS]x[SEP]", "[CLS] [CLS] x [SEP] [SEP]"},
		{"special token case-sensitive", "[cls]", "[CLS] [ cl ##s ] [SEP]"},
		{"control chars dropped", "a\x00b\x01c\u200bd", "[CLS] abc ##d [SEP]"},
		{"replacement char dropped", "a\ufffdb", "[CLS] ab [SEP]"},
		{"invalid utf8 dropped", "a\xffb\xc3", "[CLS] ab [SEP]"},
		{"lone continuation bytes", "\x80\x80hello\xbf", "[CLS] hello [SEP]"},
		{"whitespace kinds", "a\u00a0b\u3000c\u2028d", "[CLS] a b c d [SEP]"},
		{"101 chars unknown", strings.Repeat("a", 101), "[CLS] [UNK] [SEP]"},
		{"unsplittable word", "x🙂y \u0e01\u0e02", "[CLS] [UNK] [UNK] [SEP]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := pieces(t, tok, tc.text); got != tc.want {
				t.Errorf("pieces(%q) = %q, want %q", tc.text, got, tc.want)
			}
		})
	}
}

func TestTokenizerTruncation(t *testing.T) {
	tok := testTokenizer(t)
	text := strings.Repeat("hello world. ", 200) // 600 pieces
	ids := tok.Encode(text)
	if len(ids) != Window {
		t.Fatalf("len(Encode) = %d, want %d", len(ids), Window)
	}
	if ids[0] != int(tok.cls) || ids[Window-1] != int(tok.sep) {
		t.Errorf("window not framed by [CLS]/[SEP]: %d ... %d", ids[0], ids[Window-1])
	}
	if n := tok.Count(text); n != 600 {
		t.Errorf("Count = %d, want 600", n)
	}
	// Special tokens count toward the limit too.
	ids = tok.Encode(strings.Repeat("[SEP]", 300))
	if len(ids) != Window {
		t.Errorf("len = %d, want %d", len(ids), Window)
	}
}

func TestParseTokenizerErrors(t *testing.T) {
	tests := []struct {
		name, json, want string
	}{
		{"not json", "{", "not a tokenizer.json"},
		{"bpe", `{"model":{"type":"BPE"}}`, "not supported"},
		{"no normalizer", `{"model":{"type":"WordPiece","vocab":{"a":0}},"pre_tokenizer":{"type":"BertPreTokenizer"}}`, "BertNormalizer"},
		{"no pretok", `{"model":{"type":"WordPiece","vocab":{"a":0}},"normalizer":{"type":"BertNormalizer"}}`, "BertPreTokenizer"},
		{"empty vocab", `{"model":{"type":"WordPiece"},"normalizer":{"type":"BertNormalizer"},"pre_tokenizer":{"type":"BertPreTokenizer"}}`, "empty vocabulary"},
		{"no cls", `{"model":{"type":"WordPiece","vocab":{"[UNK]":0}},"normalizer":{"type":"BertNormalizer"},"pre_tokenizer":{"type":"BertPreTokenizer"}}`, "[CLS]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseTokenizer([]byte(tc.json))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// FuzzTokenizer checks that no input panics and every id is in range.
func FuzzTokenizer(f *testing.F) {
	for _, s := range []string{"", "hello", "\xff\xfe", "[CLS][SEP", "東京🙂", strings.Repeat("ab", 70)} {
		f.Add(s)
	}
	dir := modelfetch.DefaultDir()
	tok, err := LoadTokenizer(filepath.Join(dir, modelfetch.TokenizerFile))
	if err != nil {
		f.Skipf("tokenizer not installed: %v", err)
	}
	maxID := int(tok.maxID())
	f.Fuzz(func(t *testing.T, s string) {
		ids := tok.Encode(s)
		if len(ids) < 2 || len(ids) > Window {
			t.Fatalf("len %d", len(ids))
		}
		for _, id := range ids {
			if id < 0 || id > maxID {
				t.Fatalf("id %d out of range", id)
			}
		}
		if n := tok.Count(s); n < len(ids)-2 {
			t.Fatalf("Count %d < %d", n, len(ids)-2)
		}
	})
}
