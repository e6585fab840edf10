// Package store defines the palace index: drawers (chunks of memory files
// with their metadata and vectors), the files they came from, and an
// embedding cache. Backends (SQLite, PostgreSQL) implement Store and are held
// to the same behaviour by the conformance suite in storetest.
package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// ErrNotFound is returned when a requested row does not exist.
var ErrNotFound = errors.New("not found")

// ErrModelChanged is returned for a write of vectors or a vector search
// through a handle whose embedding model is no longer the palace's: another
// process recorded its own model (and dropped the vectors) since.
var ErrModelChanged = errors.New("the palace's embedding model changed")

// CheckModel returns ErrModelChanged, saying what to do, unless a handle
// whose own model is own may write and search vectors in a palace whose
// recorded model is recorded: the same model, or own is "" (the handle
// never had a model, so it has no vectors of its own to mix in).
func CheckModel(own, recorded string) error {
	if own == "" || own == recorded {
		return nil
	}
	return fmt.Errorf("%w to %q (by another process) while this one embeds with %q: restart to re-embed", ErrModelChanged, recorded, own)
}

// Drawer is one chunk of one source file. Its ID is derived from the source
// and the chunk's content hash, so the same text in the same file keeps the
// same drawer across re-mines.
type Drawer struct {
	ID        string // stable key: derived from Source + Hash (+ ordinal for repeats)
	Wing      string
	Room      string
	Agent     string
	Source    string // path of the markdown file, relative to the home
	Heading   string // the section heading the chunk belongs to ("" for the header)
	LineStart int    // 1-based, inclusive
	LineEnd   int    // 1-based, inclusive
	Date      string // YYYY-MM-DD when the heading carries a date, else ""
	Hash      string // hex sha256 of what is embedded, chunk.Chunk.EmbedText (context heading + Text): the embedding cache's key
	Text      string // the chunk as it stands in the file (without the heading)
	// SupersededBy is set when the drawer's section is marked as replaced
	// by a later one ("> superseded by:" in the markdown, see memfile): the
	// id of the first drawer of that section, or its heading when no
	// drawer of it is in the same file. Search leaves such drawers out
	// unless asked to include them.
	SupersededBy string
	Vector       []float32
}

// File is what the miner remembers about a source file so that an unchanged
// file costs one hash on the next mine.
type File struct {
	Source  string
	Hash    string // hex sha256 of the file's bytes
	Size    int64
	MinedAt time.Time
	Wing    string
	Agent   string
	// Origin is the home that mined the file (home.ID). In a palace shared
	// by several machines each removes and reindexes only its own files:
	// a file another home mined is not gone just because it is not here.
	Origin string
	// Room is the room the file was mined into (mine --room), "" when each
	// drawer's room comes from its section; reindex mines the file into it
	// again.
	Room string
}

// Filter scopes a search or listing. Empty fields match everything. A drawer
// without a date never matches a filter that sets Since or Until, because
// nothing is known about when it was written.
type Filter struct {
	Wing  string
	Room  string
	Agent string
	Since string // YYYY-MM-DD; drawers with an earlier date (or no date) are excluded
	Until string // YYYY-MM-DD inclusive upper bound; "" means none
}

// Matches reports whether a drawer is in the filter's scope. Backends filter
// in their own query language; this is the reference they are tested against.
func (f Filter) Matches(d Drawer) bool {
	switch {
	case f.Wing != "" && d.Wing != f.Wing,
		f.Room != "" && d.Room != f.Room,
		f.Agent != "" && d.Agent != f.Agent:
		return false
	case (f.Since != "" || f.Until != "") && d.Date == "":
		return false
	case f.Since != "" && d.Date < f.Since,
		f.Until != "" && d.Date > f.Until:
		return false
	}
	return true
}

// Scored is one ranked candidate: a drawer id and the backend's score
// (BM25 as a positive number for lexical, cosine for vector). Rank is 1-based.
type Scored struct {
	ID    string
	Score float64
	Rank  int
}

// FileUpdate is one file's worth of mining, applied atomically: the file
// record is written, Delete ids are removed, Insert drawers are added and
// Update drawers have their metadata (not text or vector) rewritten, in that
// order (so deleting and inserting one id replaces it). Every drawer belongs
// to File.Source (an empty Source is taken to mean it). Inserting an id that
// already exists, updating one that does not, or a vector whose dimension is
// not the recorded model's fails the whole update and changes nothing.
type FileUpdate struct {
	File   File
	Insert []Drawer
	Update []Drawer
	Delete []string
}

// CheckDrawer refuses drawers the rest of the system could not handle: no
// id, another file's drawer, a date that would not sort, a line range that
// runs backwards. An empty Source is taken to be source. Every backend
// calls it in Apply.
func CheckDrawer(d *Drawer, source string) error {
	if d.ID == "" {
		return errors.New("drawer with an empty id")
	}
	if d.Source == "" {
		d.Source = source
	} else if d.Source != source {
		return fmt.Errorf("drawer %q belongs to %q, not to the file being applied (%q)", d.ID, d.Source, source)
	}
	if err := ValidDate(d.Date); err != nil {
		return fmt.Errorf("drawer %q: %w", d.ID, err)
	}
	if d.LineStart < 0 || d.LineEnd < d.LineStart {
		return fmt.Errorf("drawer %q: bad line range %d-%d", d.ID, d.LineStart, d.LineEnd)
	}
	return nil
}

// InOrder is the drawers of ds in the order of ids, as Get returns them: an
// id none of ds has is left out, one given twice is there twice.
func InOrder(ids []string, ds []Drawer) []Drawer {
	found := make(map[string]Drawer, len(ds))
	for _, d := range ds {
		found[d.ID] = d
	}
	out := make([]Drawer, 0, len(found))
	for _, id := range ids {
		if d, ok := found[id]; ok {
			out = append(out, d)
		}
	}
	return out
}

// CheckVectors refuses a SetVectors call no backend can store: ids and
// vectors that do not pair up, or an empty vector. (The dimension is the
// backend's to check, against the palace's model.)
func CheckVectors(ids []string, vecs [][]float32) error {
	if len(ids) != len(vecs) {
		return fmt.Errorf("%d ids but %d vectors", len(ids), len(vecs))
	}
	for i, id := range ids {
		if len(vecs[i]) == 0 {
			return fmt.Errorf("drawer %q: empty vector", id)
		}
	}
	return nil
}

// CheckEmbeddings refuses a PutEmbeddings call no backend can store: no
// model name, hashes and vectors that do not pair up, an empty hash or an
// empty vector. (The dimension is the backend's to check, against the
// palace's model.)
func CheckEmbeddings(model string, hashes []string, vecs [][]float32) error {
	if model == "" {
		return errors.New("empty model name")
	}
	if len(hashes) != len(vecs) {
		return fmt.Errorf("%d hashes but %d vectors", len(hashes), len(vecs))
	}
	for i, h := range hashes {
		if h == "" {
			return errors.New("empty text hash")
		}
		if len(vecs[i]) == 0 {
			return fmt.Errorf("hash %q: empty vector", h)
		}
	}
	return nil
}

// MaxSources is the most sources one statement of DrawersOf names; a
// longer list is read in statements of that many.
const MaxSources = 500

// SourceBatches is sources sorted (byte order), without repeats, in
// batches of at most MaxSources: the statements of DrawersOf, whose
// results, read batch after batch, are then in source order.
func SourceBatches(sources []string) [][]string {
	sorted := slices.Compact(slices.Sorted(slices.Values(sources)))
	var out [][]string
	for lo := 0; lo < len(sorted); lo += MaxSources {
		out = append(out, sorted[lo:min(lo+MaxSources, len(sorted))])
	}
	return out
}

// Stats summarises the index for `status`.
type Stats struct {
	Files     int         `json:"files"`
	Drawers   int         `json:"drawers"`
	Vectors   int         `json:"vectors"`
	Wings     []WingStats `json:"wings"`
	SizeBytes int64       `json:"size_bytes"`
	Backend   string      `json:"backend"`
	// VectorMode says how Vector searches: "exact" (hivemem scans every
	// vector in scope) or "pgvector-hnsw" (PostgreSQL's HNSW index).
	VectorMode string    `json:"vector_mode,omitempty"`
	Model      string    `json:"model,omitempty"` // model id the vectors were made with, "" if none
	Dim        int       `json:"dim,omitempty"`
	LastMine   time.Time `json:"last_mine,omitzero"`
}

// WingStats counts drawers per wing.
type WingStats struct {
	Wing    string `json:"wing"`
	Drawers int    `json:"drawers"`
}

// Store is the palace backend: every role below, held to one behaviour by
// the conformance suite in storetest.
type Store interface {
	Reader
	Writer
	Models
	EmbeddingCache
	Admin
}

// Reader looks drawers up and ranks them: what a search, a wake-up and a
// listing need.
type Reader interface {
	// Get returns drawers by id (with text, without vectors), in the order asked;
	// ids that do not exist are skipped.
	Get(ctx context.Context, ids []string) ([]Drawer, error)
	// List returns drawers in scope ordered by source then LineStart, without
	// vectors; at most limit of them (all when limit <= 0).
	List(ctx context.Context, f Filter, limit int) ([]Drawer, error)
	// DrawersOf returns the drawers of several sources at once (with
	// text, without vectors), ordered by source (byte order), then as
	// Drawers orders one source's: the read of a search that looks at
	// whole conversations, one statement (per MaxSources sources) where
	// one Drawers call per source would be a round trip each. A source
	// given twice counts once; one with no drawers adds none.
	DrawersOf(ctx context.Context, sources []string) ([]Drawer, error)

	// Lexical ranks drawers in scope by full-text relevance (BM25) for a
	// plain-text query; the backend escapes it, so no user text is ever
	// interpreted as query syntax. At most k results, best first; a query
	// with no words (see QueryTerms) or k <= 0 gives none.
	Lexical(ctx context.Context, query string, f Filter, k int) ([]Scored, error)
	// Vector ranks every drawer in scope that has a vector by cosine
	// similarity with q (vectors are L2-normalised). At most k, best first,
	// equal scores by drawer id. q must have the recorded model's
	// dimension; with no vectors stored the result is empty.
	Vector(ctx context.Context, q []float32, f Filter, k int) ([]Scored, error)
	// Vectors returns the stored vectors of drawers by id, each a copy of
	// its own: the vectors a ranking looks at beyond a search's
	// candidates (the whole conversations of the palace's session
	// vectors), taken from the copy Vector scans where the backend keeps
	// one. An id that does not exist or has no vector is left out. As
	// for Vector, a handle whose model is no longer the palace's gets
	// ErrModelChanged.
	Vectors(ctx context.Context, ids []string) (map[string][]float32, error)
}

// Writer is what mining reads and writes: files, their drawers and the
// drawers' vectors.
type Writer interface {
	// GetFile returns the record of a mined file, or ErrNotFound.
	GetFile(ctx context.Context, source string) (File, error)
	// Files lists the mined files whose source starts with prefix.
	Files(ctx context.Context, prefix string) ([]File, error)
	// Drawers lists the drawers of one source, without vectors, ordered by LineStart.
	Drawers(ctx context.Context, source string) ([]Drawer, error)
	// Apply writes one FileUpdate in a single transaction.
	Apply(ctx context.Context, u FileUpdate) error
	// DeleteFile removes a file record and all its drawers; an unknown
	// source is not an error.
	DeleteFile(ctx context.Context, source string) error
	// MissingVectors lists drawers (with text) that have no vector yet, at
	// most limit of them (all when limit <= 0).
	MissingVectors(ctx context.Context, limit int) ([]Drawer, error)
	// SetVectors attaches vectors to existing drawers by id; a model must be
	// recorded and an unknown id is an error (wrapping ErrNotFound).
	SetVectors(ctx context.Context, ids []string, vecs [][]float32) error

	// Shared reports whether the palace is shared by several homes (on
	// several machines, as a PostgreSQL palace can be): then each home
	// removes and reindexes only the files it mined, since another home's
	// files are not gone just because they are not here. A palace that
	// lives in its home (SQLite) is not shared: every file is the home's.
	Shared() bool
	// LockSource holds one source file against every other writer of a
	// shared palace until unlock is called. The miner holds it across
	// reading a file's drawers, diffing and applying, so that two
	// processes mining the same file cannot both insert its new drawers or
	// undo each other's deletes. A palace that is not shared has no other
	// writer to hold off: its unlock does nothing.
	LockSource(ctx context.Context, source string) (unlock func(), err error)
}

// Models records which embedding model the vectors were made with.
type Models interface {
	// Model returns the embedding model id and dimension the stored vectors
	// were made with ("" and 0 when none). SetModel records them; a backend
	// refuses vectors of another dimension, and refuses to change the model
	// while vectors of the old one exist (call ClearVectors first), so that
	// two models' vectors are never mixed. Each handle also has a model of
	// its own: the palace's when it was opened, then the one its SetModel
	// records. While that is not the palace's (another process, maybe on
	// another machine, switched the palace to its model since), the
	// handle's writes of vectors and its vector searches fail with
	// ErrModelChanged (see CheckModel) instead of mixing two models.
	Model(ctx context.Context) (model string, dim int, err error)
	SetModel(ctx context.Context, model string, dim int) error
	// ClearVectors drops every vector (used when the model changes), keeping drawers.
	ClearVectors(ctx context.Context) error
}

// EmbeddingCache keeps vectors by text hash, so that text embedded once
// (by any model) costs no model time again under that model.
type EmbeddingCache interface {
	// CachedEmbeddings returns the cached vectors for text hashes under a model.
	CachedEmbeddings(ctx context.Context, model string, hashes []string) (map[string][]float32, error)
	// PutEmbeddings stores vectors in the cache.
	PutEmbeddings(ctx context.Context, model string, hashes []string, vecs [][]float32) error
}

// Admin is the backend as a whole: what status, reindex, check and
// shutdown need.
type Admin interface {
	// Backend names the implementation ("sqlite", "postgres").
	Backend() string
	// Stats summarises the index.
	Stats(ctx context.Context) (Stats, error)
	// Reset drops every file, drawer and vector (the embedding cache is kept).
	Reset(ctx context.Context) error
	// Check verifies the backend's integrity (PRAGMA integrity_check for SQLite).
	Check(ctx context.Context) error
	// Scrub is for purging a secret, after the drawers that held it are
	// deleted: it drops the embedding-cache entries of these text hashes
	// (under every model) and leaves no deleted text in the backend's
	// files that it can reach (SQLite: full-text index merged, secure
	// delete, VACUUM, write-ahead log truncated; PostgreSQL: VACUUM).
	Scrub(ctx context.Context, hashes []string) error
	Close() error
}
