// Package palace is the memory index at work: it mines memory files into
// drawers, searches them (BM25 and exact vector similarity, fused), and
// builds wake-up digests. The markdown stays the source of truth; everything
// here can be rebuilt from it.
package palace

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/store"
)

// Embedder turns texts into L2-normalised vectors. Implementations: the
// local MiniLM model and any OpenAI-compatible endpoint.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	Dim() int
	ModelID() string
}

// Options tunes mining and ranking; zero values take the defaults.
type Options struct {
	MaxFileBytes  int64   // files above are skipped (default 8 MiB)
	MaxTokens     int     // chunk budget (default chunk.DefaultMaxTokens)
	RRFK          int     // reciprocal-rank-fusion constant (default 60)
	CandidatePool int     // candidates taken from each ranker (default 100)
	VectorWeight  float64 // weight of the vector ranking against lexical's 1 (default 0.5)
	Fusion        string  // FusionScore (default) or FusionRRF
	EmbedBatch    int     // texts per Embed call (default 32)
	QueryCache    int     // query embeddings kept for repeated searches (default 1024; < 0 disables)
	Logger        *slog.Logger
	// Gate, when set, sees the bytes of every changed file before they
	// are chunked and returns those to index (the app redacts secrets
	// there); rewritten says it also wrote them to the file, in place. An
	// error skips the file, which keeps the drawers it had.
	Gate func(ctx context.Context, path string, data []byte) (out []byte, rewritten bool, err error)
	// Origin names this home in the index (home.ID): mined files carry it,
	// and in a shared palace (store.Writer.Shared) mining and Reindex
	// remove only files this home mined (or that no home claimed).
	Origin string
}

// Palace ties the home, the index and the embedder together.
type Palace struct {
	home  home.Home
	store store.Store
	emb   Embedder // nil: lexical-only
	opts  Options
	log   *slog.Logger
	// queries caches query embeddings by text: agents repeat searches (the
	// same question each session, a retried tool call), and embedding the
	// query is most of a warm hybrid search's time. nil when disabled.
	queries *lru.Cache[string, []float32]
	// gate orders the calls of a CPU-bound embedder, mining first; nil
	// for other embedders.
	gate *embedGate
}

// New opens the palace over an index. When the index holds vectors of
// another model than emb, they are dropped so that the next mine re-embeds
// every drawer: vectors of two models are never mixed. Should another
// process switch a shared palace to its model later, this palace's writes
// of vectors and vector searches fail with store.ErrModelChanged.
func New(ctx context.Context, h home.Home, st store.Store, emb Embedder, opts Options) (*Palace, error) {
	if opts.MaxFileBytes <= 0 {
		opts.MaxFileBytes = 8 << 20
	}
	if opts.RRFK <= 0 {
		opts.RRFK = 60
	}
	if opts.CandidatePool <= 0 {
		opts.CandidatePool = 100
	}
	if opts.VectorWeight <= 0 {
		opts.VectorWeight = 0.5
	}
	if opts.EmbedBatch <= 0 {
		opts.EmbedBatch = 32
	}
	if opts.QueryCache == 0 {
		opts.QueryCache = 1024
	}
	lg := opts.Logger
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	p := &Palace{home: h, store: st, emb: emb, opts: opts, log: lg}
	if c, ok := emb.(CPUBound); ok && c.CPUBound() {
		p.gate = &embedGate{}
	}
	if opts.QueryCache > 0 {
		c, err := lru.New[string, []float32](opts.QueryCache)
		if err != nil {
			return nil, fmt.Errorf("open palace: %w", err)
		}
		p.queries = c
	}
	if emb != nil {
		model, dim, err := st.Model(ctx)
		if err != nil {
			return nil, fmt.Errorf("open palace: %w", err)
		}
		if model != "" && (model != emb.ModelID() || dim != emb.Dim()) {
			lg.Warn("embedding model changed: dropping old vectors, the next mine re-embeds", "old", model, "new", emb.ModelID())
			if err := st.ClearVectors(ctx); err != nil {
				return nil, fmt.Errorf("open palace: %w", err)
			}
		}
		// Also when the palace has the model already (then SetModel does
		// not write): it makes it the store handle's, which checks every
		// write of vectors and every vector search against the palace's
		// model, in case another process switches it (see store.Store).
		if err := st.SetModel(ctx, emb.ModelID(), emb.Dim()); err != nil {
			return nil, fmt.Errorf("open palace: %w", err)
		}
	}
	return p, nil
}

// Home is the home the palace indexes.
func (p *Palace) Home() home.Home { return p.home }

// Store is the index backend.
func (p *Palace) Store() store.Store { return p.store }

// Embedder returns the embedder, nil when the palace is lexical-only.
func (p *Palace) Embedder() Embedder { return p.emb }

// ErrEmptyQuery is returned for a query with no searchable text.
var ErrEmptyQuery = errors.New("empty query")
