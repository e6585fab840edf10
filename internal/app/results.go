package app

import (
	"time"

	"github.com/hivemem/hivemem/internal/capture"
	"github.com/hivemem/hivemem/internal/memfile"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/redact"
	"github.com/hivemem/hivemem/internal/reflector"
	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/writelock"
)

// The types below are app's own words for what the domain below it
// reports: a front end (CLI, HTTP, MCP, the client) reads them, never the
// domain's structs, so that the JSON of every surface is defined here.
// Each has the domain type's fields and JSON names, and is made from it
// by a conversion that stops compiling when the two drift apart.

// Hit is one search hit: a drawer with every score that ranked it.
type Hit struct {
	ID           string  `json:"id" jsonschema:"drawer id"`
	Wing         string  `json:"wing"`
	Room         string  `json:"room"`
	Agent        string  `json:"agent"`
	Source       string  `json:"source" jsonschema:"file the text comes from, relative to the hivemem home"`
	Heading      string  `json:"heading" jsonschema:"the section heading; pass it to memory_read as section to read the whole section"`
	LineStart    int     `json:"line_start"`
	LineEnd      int     `json:"line_end"`
	Date         string  `json:"date,omitempty"`
	Text         string  `json:"text"`
	Score        float64 `json:"score"`
	LexicalScore float64 `json:"lexical_score"`
	LexicalRank  int     `json:"lexical_rank,omitempty"`
	VectorScore  float64 `json:"vector_score"`
	VectorRank   int     `json:"vector_rank,omitempty"`
	// SupersededBy is the drawer that states this hit's subject anew,
	// and SupersededReason why: newer or explicit.
	SupersededBy     string `json:"superseded_by,omitempty" jsonschema:"id of the drawer that supersedes this one: what this hit says is no longer current"`
	SupersededReason string `json:"superseded_reason,omitempty" jsonschema:"newer (a later dated section states the same subject) or explicit (the agent said so)"`
}

// WakeUpResult is a wake-up digest: what a new session should know first
// (one agent's), or one line per agent (the hive's).
type WakeUpResult struct {
	Wing   string   `json:"wing,omitempty"`
	Budget int      `json:"budget"`
	Tokens int      `json:"tokens"`
	Pinned []string `json:"pinned,omitempty"`
	// Restated are the pinned facts (of Pinned) that a later pinned fact
	// states again with something changed: outdated, unless both hold.
	Restated  []string     `json:"restated_pinned,omitempty"`
	Condensed string       `json:"condensed,omitempty"`
	Recent    []RecentItem `json:"recent,omitempty"`
	Agents    []AgentLine  `json:"agents,omitempty"`
	Truncated bool         `json:"truncated"`
	Text      string       `json:"text"`
}

// RecentItem is a recent section's heading and first line.
type RecentItem struct {
	Heading   string `json:"heading"`
	FirstLine string `json:"first_line"`
	Date      string `json:"date,omitempty"`
	Line      int    `json:"line"`
	// RestatedIn is the heading of a newer section that states this
	// one's subject again with something changed ("" for none).
	RestatedIn string `json:"restated_in,omitempty"`
}

// AgentLine is the one-line summary of an agent in a hive-wide wake-up.
type AgentLine struct {
	Agent    string `json:"agent"`
	Bytes    int64  `json:"bytes"`
	Sections int    `json:"sections"`
	Pinned   int    `json:"pinned"`
	Newest   string `json:"newest,omitempty"`
}

func wakeUpResultOf(d palace.Digest) WakeUpResult {
	out := WakeUpResult{Wing: d.Wing, Budget: d.Budget, Tokens: d.Tokens, Pinned: d.Pinned, Restated: d.Restated,
		Condensed: d.Condensed, Truncated: d.Truncated, Text: d.Text}
	if d.Recent != nil {
		out.Recent = make([]RecentItem, len(d.Recent))
		for i, r := range d.Recent {
			out.Recent[i] = RecentItem(r)
		}
	}
	if d.Agents != nil {
		out.Agents = make([]AgentLine, len(d.Agents))
		for i, l := range d.Agents {
			out.Agents[i] = AgentLine(l)
		}
	}
	return out
}

// MineOptions overrides what the miner derives from paths (a mine of a
// path of the caller's).
type MineOptions struct {
	Wing     string // default: the agent id, else "default"
	Agent    string // default: derived from hive/agents/<id>/ or hive/archive/<id>/
	Room     string // default: derived from the section (pinned, condensed, recent, archive)
	Progress func(done, total int, path string)
	// ReportsSkips says the caller shows the report's Skipped itself (the
	// CLI's warnings): they are not logged too.
	ReportsSkips bool
}

// ReindexOptions are a reindex's choices.
type ReindexOptions struct {
	// ReportsSkips says the caller shows the report's Skipped itself, as
	// MineOptions.ReportsSkips.
	ReportsSkips bool
}

// Skip is a file a mine or an import passed over, and why.
type Skip struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// MineReport summarises one mine (or reindex).
type MineReport struct {
	Files        int     `json:"files"`
	Unchanged    int     `json:"unchanged"`
	Changed      int     `json:"changed"`
	FilesRemoved int     `json:"files_removed"`
	Added        int     `json:"drawers_added"`
	Kept         int     `json:"drawers_kept"`
	Removed      int     `json:"drawers_removed"`
	Embedded     int     `json:"embedded"`
	CacheHits    int     `json:"embed_cache_hits"`
	Skipped      []Skip  `json:"skipped"`
	Seconds      float64 `json:"seconds"`
}

func mineReportOf(r palace.MineReport) MineReport {
	return MineReport{Files: r.Files, Unchanged: r.Unchanged, Changed: r.Changed, FilesRemoved: r.FilesRemoved,
		Added: r.Added, Kept: r.Kept, Removed: r.Removed, Embedded: r.Embedded, CacheHits: r.CacheHits,
		Skipped: skipsOf(r.Skipped), Seconds: r.Seconds}
}

// skipsOf converts skips, nil staying nil (JSON null, as before).
func skipsOf(s []palace.Skip) []Skip {
	if s == nil {
		return nil
	}
	out := make([]Skip, len(s))
	for i, k := range s {
		out[i] = Skip(k)
	}
	return out
}

// ImportResult reports an import. A nil error from Import means every
// session file holds its conversation, whatever MineErr says.
type ImportResult struct {
	Sessions   []ImportSession `json:"sessions"`
	TurnsAdded int             `json:"turns_added"`
	Expired    []string        `json:"expired,omitempty"`
	// Skipped are files under a directory given that could not be read.
	Skipped []Skip     `json:"skipped,omitempty"`
	Mine    MineReport `json:"mine"`
	// MineErr is why the index is behind the files (reported as a
	// warning: the next mine catches up).
	MineErr error `json:"-"`
	// Redacted counts the secrets replaced by markers before the write,
	// by kind; SecretsKept those found and kept as asked.
	Redacted    map[string]int `json:"redacted,omitempty"`
	SecretsKept map[string]int `json:"secrets_kept,omitempty"`
	// Purged counts the texts purged from this home that were left out
	// of what was read: the source files outside the home still hold
	// them.
	Purged int `json:"purged,omitempty"`
}

// ImportSession is what an import did with one conversation.
type ImportSession struct {
	Source       string `json:"source"`
	Format       string `json:"format"`
	Conversation string `json:"conversation"`
	Path         string `json:"path"`
	TurnsAdded   int    `json:"turns_added"`
	TurnsKept    int    `json:"turns_already_there"`
	Created      bool   `json:"created"`
}

func importResultOf(r capture.Result) ImportResult {
	out := ImportResult{TurnsAdded: r.TurnsAdded, Expired: r.Expired, Skipped: skipsOf(r.Skipped), Mine: mineReportOf(r.Mine),
		MineErr: r.MineErr, Redacted: r.Redacted, SecretsKept: r.SecretsKept, Purged: r.Purged}
	if r.Sessions != nil {
		out.Sessions = make([]ImportSession, len(r.Sessions))
		for i, s := range r.Sessions {
			out.Sessions[i] = ImportSession{Source: s.Source, Format: s.Format, Conversation: s.Conversation,
				Path: s.Path, TurnsAdded: s.TurnsAdded, TurnsKept: s.TurnsKept, Created: s.Created}
		}
	}
	return out
}

// RestoreResult says what Restore did.
type RestoreResult struct {
	Agent string `json:"agent"`
	// Backup is the backup that was put back.
	Backup string `json:"backup"`
	// PreRestoreBackup is the backup of the file Restore replaced ("" when
	// there was no file), so a restore can itself be undone.
	PreRestoreBackup string `json:"pre_restore_backup,omitempty"`
	OldBytes         int64  `json:"old_bytes"`
	NewBytes         int64  `json:"new_bytes"`
	Unchanged        bool   `json:"unchanged,omitempty"`
	// Held says automatic condensation now leaves the file alone until it
	// changes (see RestoredHold).
	Held bool `json:"held"`
	// Archived is how many sections the restore put in the archive: those
	// of the replaced file the backup does not hold, and one of its other
	// lines the backup lacks (Archive is the file, relative to the home).
	Archived  int    `json:"archived,omitempty"`
	Archive   string `json:"archive,omitempty"`
	MineError string `json:"mine_error,omitempty"`
}

// ReflectorBackoff is the reflector's failure record of one agent, while
// its condensations keep aborting (shared on disk by every process).
type ReflectorBackoff struct {
	Failures    int       `json:"failures"`
	NextAttempt time.Time `json:"next_attempt"`
	LastReason  string    `json:"last_reason,omitempty"`
	LastError   string    `json:"last_error,omitempty"`
	LastFailure time.Time `json:"last_failure"`
	// Restored is set by a restore: the file is left alone by automatic
	// condensation while it still holds exactly what was restored.
	Restored *RestoredHold `json:"restored,omitempty"`
}

// RestoredHold records a restore: which backup was put back, when, and
// the size and hash of the file it left. Automatic passes leave the agent
// alone until the file differs from that or a condensation is forced.
type RestoredHold struct {
	Backup string    `json:"backup"`
	At     time.Time `json:"at"`
	Size   int64     `json:"size"`
	SHA256 string    `json:"sha256"`
}

func restoredHoldOf(h *reflector.RestoredHold) *RestoredHold {
	if h == nil {
		return nil
	}
	out := RestoredHold(*h)
	return &out
}

func reflectorBackoffOf(s reflector.AgentState) *ReflectorBackoff {
	return &ReflectorBackoff{Failures: s.Failures, NextAttempt: s.NextAttempt, LastReason: s.LastReason,
		LastError: s.LastError, LastFailure: s.LastFailure, Restored: restoredHoldOf(s.Restored)}
}

// IndexStats summarises the index for status.
type IndexStats struct {
	Files     int         `json:"files"`
	Drawers   int         `json:"drawers"`
	Vectors   int         `json:"vectors"`
	Wings     []WingStats `json:"wings"`
	SizeBytes int64       `json:"size_bytes"`
	Backend   string      `json:"backend"`
	// VectorMode says how search by meaning runs: "exact" (hivemem scans
	// every vector in scope) or "pgvector-hnsw" (PostgreSQL's HNSW index).
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

func indexStatsOf(s store.Stats) IndexStats {
	out := IndexStats{Files: s.Files, Drawers: s.Drawers, Vectors: s.Vectors, SizeBytes: s.SizeBytes, Backend: s.Backend,
		VectorMode: s.VectorMode, Model: s.Model, Dim: s.Dim, LastMine: s.LastMine}
	if s.Wings != nil {
		out.Wings = make([]WingStats, len(s.Wings))
		for i, w := range s.Wings {
			out.Wings[i] = WingStats(w)
		}
	}
	return out
}

// LineInfo is one line of a memory file: its 1-based number, its text
// without line ending, and the heading of the section it is in ("" in
// the header).
type LineInfo struct {
	Number  int    `json:"line"`
	Text    string `json:"text"`
	Heading string `json:"heading,omitempty"`
}

func lineInfoOf(l memfile.Line) LineInfo { return LineInfo(l) }

// SecretCounts is how many secrets of each kind a text held.
type SecretCounts map[string]int

// Total is the number of secrets counted.
func (c SecretCounts) Total() int { return redact.Counts(c).Total() }

// String is "2 aws-access-key, 1 jwt" (kinds sorted), or "none".
func (c SecretCounts) String() string { return redact.Counts(c).String() }

// LockHolder says who holds the palace write lock a write waits for.
type LockHolder struct {
	PID     int       `json:"pid"`
	Command string    `json:"command"`
	Since   time.Time `json:"since"`
}

// String reads "hivemem run (pid 1234)".
func (h LockHolder) String() string { return writelock.Holder(h).String() }

// holderFunc is f, told of a domain Holder (nil for nil).
func holderFunc(f func(LockHolder)) func(writelock.Holder) {
	if f == nil {
		return nil
	}
	return func(h writelock.Holder) { f(LockHolder(h)) }
}

// SupersededNote is the one line that says a hit is no longer current
// ("superseded by <id> (a newer section states this subject)"), "" when
// it is.
func (h Hit) SupersededNote() string { return palace.Hit(h).SupersededNote() }
