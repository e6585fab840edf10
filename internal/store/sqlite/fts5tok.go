package sqlite

import "github.com/hivemem/hivemem/internal/store/fts"

// The Go copy of the palace's FTS5 tokenizer lives in internal/store/fts,
// shared with the PostgreSQL backend: ASCII text is tokenized there, any
// other text by SQLite's own tokenizer (tokenizer.tokenize), so the
// in-memory lexical index holds exactly FTS5's tokens.

// asciiTokens calls emit with each token of the ASCII text s, as FTS5 would
// index it; ok is false (and nothing is emitted) when s is not ASCII or
// holds a token too long for the Go path.
func asciiTokens(s string, emit func(tok string)) (ok bool) { return fts.ASCIITokens(s, emit) }

// isASCII reports whether s is all ASCII, the text asciiTokens handles.
func isASCII(s string) bool { return fts.IsASCII(s) }
