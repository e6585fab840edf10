package app

import (
	"context"
	"errors"
	"time"
)

// EmbedderLoad is what LoadEmbedder did.
type EmbedderLoad struct {
	// Provider is the embedder's (minilm, openai, none).
	Provider string
	// Model is the model loaded, with the Seconds it took; "" when none
	// was (lexical-only, or the load failed).
	Model   string
	Seconds float64
	// Note says why search is lexical-only from the start (no model
	// installed, embedder.provider = none).
	Note string
	// LexicalOnly: the local model failed to load, and the app now
	// searches and mines lexical-only.
	LexicalOnly bool
}

// LoadEmbedder loads the embedding model now, so that the first mine does
// not pay for it. A local model that fails to load makes the app
// lexical-only (LexicalOnly) rather than failing every mine, its palace
// rebuilt as Open builds it; a remote embedder that does not answer is
// kept (it may come back). The error is the failure, if any; the result
// says what was done either way.
func (a *App) LoadEmbedder(ctx context.Context) (EmbedderLoad, error) {
	out := EmbedderLoad{Provider: a.embedder.Provider}
	emb := a.palace.Embedder()
	if emb == nil {
		out.Note = a.embedder.Note
		return out, nil
	}
	start := time.Now()
	if _, err := emb.Embed(ctx, []string{"hivemem warm-up"}); err != nil {
		if a.embedder.Provider != "minilm" {
			return out, err
		}
		if perr := a.useLexicalOnly(ctx, err); perr != nil {
			return out, errors.Join(err, perr)
		}
		out.LexicalOnly = true
		return out, err
	}
	out.Model, out.Seconds = emb.ModelID(), time.Since(start).Seconds()
	return out, nil
}

// SearchMode is how searches run: hybrid, or lexical without an embedder.
func (a *App) SearchMode() string { return a.palace.Mode() }
