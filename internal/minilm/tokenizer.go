package minilm

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Window is the model's input length in tokens, [CLS] and [SEP] included.
// Longer inputs are truncated, as the reference embedder does.
const Window = 256

// Tokenizer is a BERT WordPiece tokenizer read from a Hugging Face
// tokenizer.json. It reproduces the `tokenizers` library's BertNormalizer,
// BertPreTokenizer and WordPiece model so that token ids match the reference
// implementation the model was trained and tested with.
type Tokenizer struct {
	vocab       map[string]int32
	unk         int32
	cls, sep    int32
	pad         int32
	prefix      string // continuing-subword prefix, "##"
	maxWordLen  int    // words longer than this (in runes) become [UNK]
	added       []addedToken
	cleanText   bool
	chineseChar bool
	stripAccent bool
	lowercase   bool
}

type addedToken struct {
	content string
	id      int32
}

// tokenizerJSON is the subset of tokenizer.json that a BERT tokenizer uses.
type tokenizerJSON struct {
	AddedTokens []struct {
		ID      int32  `json:"id"`
		Content string `json:"content"`
	} `json:"added_tokens"`
	Normalizer *struct {
		Type               string `json:"type"`
		CleanText          *bool  `json:"clean_text"`
		HandleChineseChars *bool  `json:"handle_chinese_chars"`
		StripAccents       *bool  `json:"strip_accents"`
		Lowercase          *bool  `json:"lowercase"`
	} `json:"normalizer"`
	PreTokenizer *struct {
		Type string `json:"type"`
	} `json:"pre_tokenizer"`
	Model struct {
		Type                    string           `json:"type"`
		UnkToken                string           `json:"unk_token"`
		ContinuingSubwordPrefix *string          `json:"continuing_subword_prefix"`
		MaxInputCharsPerWord    *int             `json:"max_input_chars_per_word"`
		Vocab                   map[string]int32 `json:"vocab"`
	} `json:"model"`
}

// LoadTokenizer reads a tokenizer.json file.
func LoadTokenizer(path string) (*Tokenizer, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load tokenizer: %w", err)
	}
	t, err := parseTokenizer(raw)
	if err != nil {
		return nil, fmt.Errorf("load tokenizer %s: %w", path, err)
	}
	return t, nil
}

func parseTokenizer(raw []byte) (*Tokenizer, error) {
	var tj tokenizerJSON
	if err := json.Unmarshal(raw, &tj); err != nil {
		return nil, fmt.Errorf("not a tokenizer.json: %w", err)
	}
	if tj.Model.Type != "WordPiece" {
		return nil, fmt.Errorf("model type %q is not supported (want WordPiece)", tj.Model.Type)
	}
	if tj.Normalizer == nil || tj.Normalizer.Type != "BertNormalizer" {
		return nil, fmt.Errorf("normalizer is not BertNormalizer")
	}
	if tj.PreTokenizer == nil || tj.PreTokenizer.Type != "BertPreTokenizer" {
		return nil, fmt.Errorf("pre-tokenizer is not BertPreTokenizer")
	}
	if len(tj.Model.Vocab) == 0 {
		return nil, fmt.Errorf("empty vocabulary")
	}
	flag := func(p *bool, def bool) bool {
		if p == nil {
			return def
		}
		return *p
	}
	n := tj.Normalizer
	t := &Tokenizer{
		vocab:       tj.Model.Vocab,
		prefix:      "##",
		maxWordLen:  100,
		cleanText:   flag(n.CleanText, true),
		chineseChar: flag(n.HandleChineseChars, true),
		lowercase:   flag(n.Lowercase, true),
	}
	// As in the tokenizers library, strip_accents unset follows lowercase.
	t.stripAccent = flag(n.StripAccents, t.lowercase)
	if p := tj.Model.ContinuingSubwordPrefix; p != nil {
		t.prefix = *p
	}
	if m := tj.Model.MaxInputCharsPerWord; m != nil {
		if *m <= 0 {
			return nil, fmt.Errorf("max_input_chars_per_word %d is not positive", *m)
		}
		t.maxWordLen = *m
	}
	for tok, id := range t.vocab {
		if id < 0 {
			return nil, fmt.Errorf("vocabulary entry %q has negative id %d", tok, id)
		}
	}
	lookup := func(name string) (int32, error) {
		id, ok := t.vocab[name]
		if !ok {
			return 0, fmt.Errorf("vocabulary lacks %s", name)
		}
		return id, nil
	}
	var err error
	unk := tj.Model.UnkToken
	if unk == "" {
		unk = "[UNK]"
	}
	if t.unk, err = lookup(unk); err != nil {
		return nil, err
	}
	if t.cls, err = lookup("[CLS]"); err != nil {
		return nil, err
	}
	if t.sep, err = lookup("[SEP]"); err != nil {
		return nil, err
	}
	if t.pad, err = lookup("[PAD]"); err != nil {
		return nil, err
	}
	for _, a := range tj.AddedTokens {
		if a.Content == "" || a.ID < 0 {
			return nil, fmt.Errorf("added token %q with id %d is invalid", a.Content, a.ID)
		}
		t.added = append(t.added, addedToken{a.Content, a.ID})
	}
	// Longest first, so that at one position the longest token wins.
	sort.SliceStable(t.added, func(i, j int) bool { return len(t.added[i].content) > len(t.added[j].content) })
	return t, nil
}

// maxID is the largest token id the tokenizer can produce.
func (t *Tokenizer) maxID() int32 {
	m := int32(0)
	for _, id := range t.vocab {
		m = max(m, id)
	}
	for _, a := range t.added {
		m = max(m, a.id)
	}
	return m
}

// Encode returns the model input for text: [CLS], at most Window-2
// word-pieces, [SEP].
func (t *Tokenizer) Encode(text string) []int {
	pieces := t.appendPieces(nil, text, Window-2)
	ids := make([]int, 0, len(pieces)+2)
	ids = append(ids, int(t.cls))
	for _, p := range pieces {
		ids = append(ids, int(p))
	}
	return append(ids, int(t.sep))
}

// Count returns the number of word-pieces in text, without [CLS]/[SEP] and
// without truncation, so that callers can tell whether a text fits the
// window (Count(text) <= Window-2).
func (t *Tokenizer) Count(text string) int {
	return len(t.appendPieces(nil, text, -1))
}

// encode32 is Encode for the model's own use.
func (t *Tokenizer) encode32(text string) []int32 {
	ids := make([]int32, 1, 32)
	ids[0] = t.cls
	ids = t.appendPieces(ids, text, Window-2)
	return append(ids, t.sep)
}

// appendPieces appends the word-piece ids of text to dst, stopping once limit
// pieces were appended (limit < 0: no limit). Added tokens such as [CLS] are
// matched verbatim in the raw text first, as the tokenizers library does.
func (t *Tokenizer) appendPieces(dst []int32, text string, limit int) []int32 {
	start := len(dst)
	full := func() bool { return limit >= 0 && len(dst)-start >= limit }
	for text != "" && !full() {
		at, tok := t.nextAdded(text)
		dst = t.appendSegment(dst, text[:at], start, limit)
		if tok == nil {
			break
		}
		if !full() {
			dst = append(dst, tok.id)
		}
		text = text[at+len(tok.content):]
	}
	if limit >= 0 && len(dst)-start > limit {
		dst = dst[:start+limit]
	}
	return dst
}

// nextAdded finds the leftmost (then longest) added token in s; it returns
// len(s), nil when there is none.
func (t *Tokenizer) nextAdded(s string) (int, *addedToken) {
	best, bestTok := len(s), (*addedToken)(nil)
	for i := range t.added {
		a := &t.added[i]
		if j := strings.Index(s[:min(len(s), best+len(a.content))], a.content); j >= 0 && j < best {
			best, bestTok = j, a
		}
	}
	return best, bestTok
}

// appendSegment normalises, splits and word-pieces a stretch of text that
// holds no added token.
func (t *Tokenizer) appendSegment(dst []int32, s string, start, limit int) []int32 {
	if s == "" {
		return dst
	}
	norm := t.normalize(s)
	word := -1 // byte offset of the current word in norm, or -1
	flush := func(end int) {
		if word >= 0 {
			dst = t.wordPiece(dst, norm[word:end])
			word = -1
		}
	}
	for i, r := range norm {
		if limit >= 0 && len(dst)-start >= limit {
			return dst
		}
		switch {
		case unicode.IsSpace(r):
			flush(i)
		case isPunct(r):
			flush(i)
			dst = t.wordPiece(dst, norm[i:i+utf8.RuneLen(r)])
		default:
			if word < 0 {
				word = i
			}
		}
	}
	flush(len(norm))
	return dst
}

// normalize applies the BertNormalizer steps: clean text, pad CJK
// ideographs with spaces, NFD + drop non-spacing marks, lowercase.
func (t *Tokenizer) normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	// Ranging over a string yields U+FFFD for each invalid byte; the
	// cleaner drops it like a literal U+FFFD.
	for _, r := range s {
		if t.cleanText {
			if r == 0 || r == utf8.RuneError || isControl(r) {
				continue
			}
			if isWhitespace(r) {
				r = ' '
			}
		}
		if t.chineseChar && isChinese(r) {
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
			continue
		}
		b.WriteRune(r)
	}
	out := b.String()
	if t.stripAccent {
		out = norm.NFD.String(out)
		out = strings.Map(func(r rune) rune {
			if unicode.Is(unicode.Mn, r) {
				return -1
			}
			return r
		}, out)
	}
	if t.lowercase {
		out = lower(out)
	}
	return out
}

// lower lowercases rune by rune with the full (not simple) mapping, as
// Rust's char::to_lowercase does: U+0130 becomes "i\u0307".
func lower(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r == 'İ' {
			b.WriteString("i\u0307")
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// wordPiece splits one pre-tokenised word greedily into the longest
// vocabulary entries, continuing pieces carrying the "##" prefix; a word
// that cannot be split, or is too long, becomes a single [UNK].
func (t *Tokenizer) wordPiece(dst []int32, word string) []int32 {
	if utf8.RuneCountInString(word) > t.maxWordLen {
		return append(dst, t.unk)
	}
	mark := len(dst)
	buf := make([]byte, 0, len(t.prefix)+len(word))
	for start := 0; start < len(word); {
		end := len(word)
		found := false
		for end > start {
			buf = buf[:0]
			if start > 0 {
				buf = append(buf, t.prefix...)
			}
			buf = append(buf, word[start:end]...)
			if id, ok := t.vocab[string(buf)]; ok {
				dst = append(dst, id)
				found = true
				break
			}
			_, size := utf8.DecodeLastRuneInString(word[start:end])
			end -= size
		}
		if !found {
			return append(dst[:mark], t.unk)
		}
		start = end
	}
	return dst
}

// isWhitespace is Rust's char::is_whitespace (the White_Space property),
// which Go's unicode.IsSpace implements too.
func isWhitespace(r rune) bool { return unicode.IsSpace(r) }

// isControl is the tokenizers library's notion of a control character: the
// Unicode categories Cc, Cf and Co, except tab, newline and carriage return,
// which count as whitespace.
func isControl(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co)
}

// isPunct matches BertPreTokenizer: every ASCII punctuation or symbol
// character, and every Unicode punctuation (P*) character.
func isPunct(r rune) bool {
	if r < utf8.RuneSelf {
		return (r >= 33 && r <= 47) || (r >= 58 && r <= 64) || (r >= 91 && r <= 96) || (r >= 123 && r <= 126)
	}
	return unicode.IsPunct(r)
}

// isChinese reports a CJK Unified Ideograph (the blocks BERT pads with
// spaces; Hiragana, Katakana and Hangul are not among them).
func isChinese(r rune) bool {
	return (r >= 0x4E00 && r <= 0x9FFF) ||
		(r >= 0x3400 && r <= 0x4DBF) ||
		(r >= 0x20000 && r <= 0x2A6DF) ||
		(r >= 0x2A700 && r <= 0x2B73F) ||
		(r >= 0x2B740 && r <= 0x2B81F) ||
		(r >= 0x2B920 && r <= 0x2CEAF) ||
		(r >= 0xF900 && r <= 0xFAFF) ||
		(r >= 0x2F800 && r <= 0x2FA1F)
}
