package app

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hivemem/hivemem/internal/atomicio"
	"github.com/hivemem/hivemem/internal/config"
	"github.com/hivemem/hivemem/internal/purge"
	"github.com/hivemem/hivemem/internal/redact"
)

// Secret redaction happens here, once, before any byte of a write reaches
// the disk: remember, pin and import (and so the hooks, the HTTP API and
// MCP, which call them) redact their text first, so that the duplicate
// check, the file, the index, the embedder and its cache only ever see
// markers. The miner is a gate too (gateFile): a memory or session file
// an agent appended a secret to by hand is redacted in place, under its
// lock and atomically, before it is indexed, embedded, archived or backed
// up.

// KeepSecretsFlag names the per-write escape hatch in messages.
const KeepSecretsFlag = "keep_secrets"

// Redaction is what a write did about secrets: the counts by kind of those
// replaced by a marker, or of those found and kept as written because the
// write asked to keep them. Never a value.
type Redaction struct {
	Redacted SecretCounts `json:"redacted,omitempty" jsonschema:"secrets replaced by a marker naming their kind before the write, by kind (never the values)"`
	// Kept are secrets found and written as they are: the write asked
	// for it (keep_secrets).
	Kept SecretCounts `json:"secrets_kept,omitempty" jsonschema:"secrets found and written as they are because the write asked to keep them (keep_secrets), by kind"`
	// Purged counts the texts purged from this home that the write
	// brought back and that were left out ([purged] instead), whatever
	// keep_secrets or redact.enabled say.
	Purged int `json:"purged,omitempty" jsonschema:"texts purged from this home that the write brought back, left out ([purged] instead)"`
}

// Any says whether the write found a secret.
func (r Redaction) Any() bool { return r.Redacted.Total()+r.Kept.Total()+r.Purged > 0 }

// String is the sentence the CLI prints: "redacted 2 secrets (1 jwt,
// 1 stripe-key)", or that they were kept.
func (r Redaction) String() string {
	var parts []string
	if n := r.Redacted.Total(); n > 0 {
		parts = append(parts, fmt.Sprintf("redacted %s (%s)", plural(n, "secret"), r.Redacted))
	}
	if n := r.Kept.Total(); n > 0 {
		parts = append(parts, fmt.Sprintf("kept %s as written, as asked (%s): %s", plural(n, "secret"), KeepSecretsFlag, r.Kept))
	}
	if r.Purged > 0 {
		parts = append(parts, fmt.Sprintf("left out %s purged from this home", plural(r.Purged, "text")))
	}
	return strings.Join(parts, "; ")
}

func plural(n int, what string) string { return pluralOf(n, what, what+"s") }

func pluralOf(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// redactor is the redactor of the live settings, nil when redaction is
// off (redact.enabled = false).
func (a *App) redactor() (*redact.Redactor, error) {
	return newRedactor(a.Settings().Redact)
}

func newRedactor(c config.Redact) (*redact.Redactor, error) {
	if !c.Enabled {
		return nil, nil
	}
	if len(c.Allow)+len(c.AllowPatterns)+len(c.Rules) == 0 {
		return redact.Default, nil
	}
	return redact.New(c.Options())
}

// writeRedaction is a write's redaction of its texts in progress.
type writeRedaction struct {
	r    *redact.Redactor // nil: off
	keep bool
	// blocked is the purge block list: applied whatever r and keep say.
	blocked purge.Blocklist
	res     Redaction
	// kept are the hashes of the secrets kept as asked: remembered
	// (keepSecrets) so that the miner's gate keeps them too.
	kept []string
}

// writeRedactor starts the redaction of one write; keep finds the secrets
// and keeps them (the result says so).
func (a *App) writeRedactor(keep bool) (*writeRedaction, error) {
	r, err := a.redactor()
	if err != nil {
		return nil, fmt.Errorf("redact: %w", err)
	}
	bl, err := purge.LoadBlocklist(a.home.PalaceDir())
	if err != nil {
		return nil, fmt.Errorf("purge block list: %w", err)
	}
	return &writeRedaction{r: r, keep: keep, blocked: bl}, nil
}

// text redacts s (or, with keep, only counts its secrets).
func (w *writeRedaction) text(s string) string {
	if s == "" {
		return s
	}
	if !w.blocked.Empty() {
		var n int
		s, n = w.blocked.Redact(s)
		w.res.Purged += n
	}
	if w.r == nil {
		return s
	}
	fs := w.r.Find(s)
	if len(fs) == 0 {
		return s
	}
	c := redact.CountOf(fs)
	if w.keep {
		if w.res.Kept == nil {
			w.res.Kept = SecretCounts{}
		}
		redact.Counts(w.res.Kept).Add(c)
		for _, f := range fs {
			w.kept = append(w.kept, f.Hash)
		}
		return s
	}
	if w.res.Redacted == nil {
		w.res.Redacted = SecretCounts{}
	}
	redact.Counts(w.res.Redacted).Add(c)
	return redact.Apply(s, fs)
}

// keepSecrets records the hashes of the secrets a write keeps as asked,
// before the write, so that the miner's gate does not redact them after.
func (a *App) keepSecrets(ctx context.Context, w *writeRedaction) error {
	if len(w.kept) == 0 {
		return nil
	}
	path := a.keptPath()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("keep secrets: %w", err)
	}
	lctx, cancel := context.WithTimeout(ctx, gateLockWait)
	defer cancel()
	err := atomicio.Update(lctx, path, 0o644, func(old []byte) ([]byte, error) {
		have := map[string]bool{}
		for _, h := range strings.Fields(string(old)) {
			have[h] = true
		}
		out := old
		for _, h := range w.kept {
			if !have[h] {
				have[h] = true
				out = append(out, h+"\n"...)
			}
		}
		return out, nil
	})
	if err != nil {
		return fmt.Errorf("keep secrets: %w", err)
	}
	return nil
}

// keptPath lists the SHA-256 hashes of the secrets kept as asked
// (keep_secrets), one a line: beside the index, not in the hive, which
// holds only what agents and people wrote.
func (a *App) keptPath() string { return filepath.Join(a.home.PalaceDir(), "kept-secrets") }

// keptHashes are the hashes of keptPath (none when it is missing).
func (a *App) keptHashes() (map[string]bool, error) {
	data, err := os.ReadFile(a.keptPath())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read kept secrets: %w", err)
	}
	out := map[string]bool{}
	for _, h := range strings.Fields(string(data)) {
		out[h] = true
	}
	return out, nil
}

// withoutKept drops the findings of secrets kept as asked.
func withoutKept(fs []redact.Finding, kept map[string]bool) []redact.Finding {
	if len(kept) == 0 {
		return fs
	}
	out := fs[:0:0]
	for _, f := range fs {
		if !kept[f.Hash] {
			out = append(out, f)
		}
	}
	return out
}

// reference redacts s, a reference to text written before (the pinned
// fact a new one replaces), as that text was redacted, without counting:
// nothing of it is written.
func (w *writeRedaction) reference(s string) string {
	if !w.blocked.Empty() {
		s, _ = w.blocked.Redact(s)
	}
	if w.r == nil || w.keep || s == "" {
		return s
	}
	out, _ := w.r.Redact(s)
	return out
}

// logRedaction logs a "redact" event for a write that found secrets: the
// file, who wrote, and the counts by kind; never a value.
func (a *App) logRedaction(agent, source, by string, r Redaction) {
	if !r.Any() {
		return
	}
	data := map[string]any{"path": source, "by": by}
	if r.Redacted.Total() > 0 {
		data["redacted"] = map[string]int(r.Redacted)
	}
	if r.Kept.Total() > 0 {
		data["kept"] = map[string]int(r.Kept)
	}
	a.event("redact", agent, data)
}

// gateLockWait bounds the miner gate's wait for a file's lock.
const gateLockWait = 10 * time.Second

// gateFile is the miner's gate (palace.Options.Gate): data, the bytes of
// path about to be indexed, with its secrets redacted. A file of the hive
// (a memory, session or archive file) is redacted in place first, under
// its lock and atomically, with no copy of the old bytes kept; a file
// outside the home (a directory mined by path) is never written: only
// what is indexed is redacted. Each file redacted logs a "redact" event
// naming the file, and the line and kind of each secret.
func (a *App) gateFile(ctx context.Context, path string, data []byte) ([]byte, bool, error) {
	r, err := a.redactor()
	if err != nil {
		return data, false, err
	}
	// A text purged from this home that a hand edit brought back is
	// left out too, whatever redact.enabled says.
	bl, err := purge.LoadBlocklist(a.home.PalaceDir())
	if err != nil {
		return nil, false, fmt.Errorf("purge block list: %w", err)
	}
	if r == nil && bl.Empty() {
		return data, false, nil
	}
	kept, err := a.keptHashes()
	if err != nil {
		return nil, false, err
	}
	clean := func(b []byte) ([]byte, []redact.Finding, int) {
		s, n := string(b), 0
		if !bl.Empty() {
			s, n = bl.Redact(s)
		}
		var fs []redact.Finding
		if r != nil {
			fs = withoutKept(r.Find(s), kept)
			s = redact.Apply(s, fs)
		}
		return []byte(s), fs, n
	}
	out, fs, purged := clean(data)
	if len(fs) == 0 && purged == 0 {
		return data, false, nil
	}
	if !a.inHive(path) {
		a.logGate(path, fs, purged, false)
		return out, false, nil
	}
	lctx, cancel := context.WithTimeout(ctx, gateLockWait)
	defer cancel()
	err = atomicio.Update(lctx, path, 0o644, func(old []byte) ([]byte, error) {
		// What is there now: an agent may have appended since the read.
		out, fs, purged = clean(old)
		return out, nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("redact %s in place: %w", a.home.Rel(path), err)
	}
	a.logGate(path, fs, purged, true)
	return out, true, nil
}

// logGate logs the gate's "redact" event for path.
func (a *App) logGate(path string, fs []redact.Finding, purged int, rewritten bool) {
	if len(fs) == 0 && purged == 0 {
		return
	}
	agent, _, ok := a.home.AgentFromPath(path)
	if !ok {
		agent, _ = a.home.SessionFromPath(path)
	}
	lines := make([]map[string]any, 0, len(fs))
	for _, f := range fs {
		lines = append(lines, map[string]any{"line": f.Line, "kind": f.Kind})
	}
	data := map[string]any{"path": a.home.Rel(path), "by": "mine", "rewritten": rewritten,
		"redacted": map[string]int(redact.CountOf(fs)), "secrets": lines}
	if purged > 0 {
		data["purged"] = purged
	}
	a.event("redact", agent, data)
	a.log.Warn("redacted secrets in a mined file", "path", a.home.Rel(path), "secrets", len(fs), "purged", purged, "rewritten", rewritten)
}

// inHive says whether path is a file of the home's hive (one hivemem may
// rewrite).
func (a *App) inHive(path string) bool {
	rel, err := filepath.Rel(a.home.HiveDir(), path)
	return err == nil && rel != "." && !strings.HasPrefix(rel, "..") && !filepath.IsAbs(rel)
}

// RedactMemoryFiles passes every agent's memory file through the miner's
// gate: the manager calls it before a reflector pass, so that no secret
// appended by hand since the last mine reaches an archive or a backup.
func (a *App) RedactMemoryFiles(ctx context.Context) error { return a.redactMemoryFiles(ctx) }

// redactMemoryFiles passes the memory files of agents (none: every
// agent's) through the miner's gate before an operation that archives or
// backs them up (a condensation, a forget, an unpin).
func (a *App) redactMemoryFiles(ctx context.Context, agents ...string) error {
	if len(agents) == 0 {
		var err error
		if agents, err = a.home.Agents(); err != nil {
			return err
		}
	}
	var errs []error
	for _, id := range agents {
		path, err := a.home.MemoryPath(id)
		if err != nil {
			continue
		}
		data, err := atomicio.ReadRegular(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if _, _, err := a.gateFile(ctx, path, data); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// RedactInfo is the redaction setting, for status.
type RedactInfo struct {
	Enabled       bool `json:"enabled"`
	Allow         int  `json:"allow" jsonschema:"values kept as written (redact.allow)"`
	AllowPatterns int  `json:"allow_patterns"`
	Rules         int  `json:"extra_rules" jsonschema:"rules added to the built-in ones (redact.rules)"`
}

func (r RedactInfo) String() string {
	if !r.Enabled {
		return "off (redact.enabled = false): secrets are written as they are"
	}
	s := "on: secrets are replaced by a marker before any write"
	var extra []string
	if n := r.Allow + r.AllowPatterns; n > 0 {
		extra = append(extra, pluralOf(n, "allow-list entry", "allow-list entries"))
	}
	if r.Rules > 0 {
		extra = append(extra, plural(r.Rules, "extra rule"))
	}
	if len(extra) > 0 {
		s += " (" + strings.Join(extra, ", ") + ")"
	}
	return s
}

func redactInfo(c config.Redact) RedactInfo {
	return RedactInfo{Enabled: c.Enabled, Allow: len(c.Allow), AllowPatterns: len(c.AllowPatterns), Rules: len(c.Rules)}
}

// ScanRequest asks where secrets already are in the home; with Purge,
// every secret found is then purged from the whole home, as Purge does
// (no prompt: for scripts).
type ScanRequest struct {
	Purge bool `json:"purge,omitempty"`
	// Scope: a caller bound to its own memory cannot purge the home.
	Scope Scope `json:"-"`
}

// Validate checks the request; every error is ErrInvalid.
func (r ScanRequest) Validate() error {
	if r.Purge && r.Scope.Caller != "" {
		return invalid(fmt.Errorf("scan: --purge refused: this server acts only for agent %q, and a purge changes every agent's files", r.Scope.Caller))
	}
	return nil
}

// ScanFinding is one secret found by Scan: where and of what kind, never
// the value. Hash (the SHA-256 of the value) is what a purge of it needs;
// it never leaves the process.
type ScanFinding struct {
	File string `json:"file" jsonschema:"the file, relative to the hivemem home"`
	Line int    `json:"line"`
	Kind string `json:"kind"`
	Hash string `json:"-"`
}

// ScanResult lists the secrets in the home's files.
type ScanResult struct {
	Files    int           `json:"files" jsonschema:"files scanned"`
	Findings []ScanFinding `json:"findings"`
	// Purged is what the purge of the secrets found did (Purge asked and
	// something was found).
	Purged *PurgeResult `json:"purged,omitempty"`
	// Secrets counts the distinct secrets found (a secret copied into a
	// backup is one secret in two findings).
	Secrets int `json:"secrets"`
}

// Scan lists the secrets already in the home: memory files, archives,
// forgotten text, sessions, backups and the event log (everything under
// hive/), as the redactor of the live settings finds them — whether or
// not redaction is on. It reads only.
func (a *App) Scan(ctx context.Context, req ScanRequest) (ScanResult, error) {
	if err := req.Validate(); err != nil {
		return ScanResult{}, err
	}
	r, err := newRedactor(a.scanSettings())
	if err != nil {
		return ScanResult{}, fmt.Errorf("scan: %w", err)
	}
	out := ScanResult{Findings: []ScanFinding{}}
	// values are the secrets found, by hash: what a purge takes. They
	// never leave this function.
	values := map[string]string{}
	err = filepath.WalkDir(a.home.HiveDir(), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return err
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := atomicio.ReadRegular(path)
		if err != nil {
			return err
		}
		out.Files++
		for _, f := range r.Find(string(data)) {
			out.Findings = append(out.Findings, ScanFinding{File: a.home.Rel(path), Line: f.Line, Kind: f.Kind, Hash: f.Hash})
			values[f.Hash] = string(data[f.Start:f.End])
		}
		return nil
	})
	if err != nil {
		return out, fmt.Errorf("scan: %w", err)
	}
	out.Secrets = len(values)
	if !req.Purge || len(values) == 0 {
		return out, nil
	}
	texts := make([]purge.Text, 0, len(values))
	for _, h := range slices.Sorted(maps.Keys(values)) {
		if purge.CheckText(values[h]) == nil {
			texts = append(texts, purge.Text{Text: values[h]})
		}
	}
	res, err := a.purgeTexts(ctx, texts, false, 0)
	out.Purged = &res
	if err != nil {
		return out, fmt.Errorf("scan: purge: %w", err)
	}
	return out, nil
}

// scanSettings are the redaction settings a scan uses: the live ones,
// switched on (a scan looks even where writes do not redact).
func (a *App) scanSettings() config.Redact {
	c := a.Settings().Redact
	c.Enabled = true
	return c
}
