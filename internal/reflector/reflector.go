// Package reflector keeps agents' memory files bounded without losing a
// line: when a file grows past its triggers, the oldest sections are
// appended verbatim to the agent's archive, summarised into the condensed
// history by a Summarizer, and the file is rebuilt into its three regions
// (pinned facts, condensed history, Recent + the newest sections verbatim).
//
// The pipeline is built so that no failure and no concurrent writer can
// lose data:
//
//   - the file is read under its lock, but the lock is not held while the
//     summariser runs (an LLM can take minutes and agents must be able to
//     append meanwhile);
//   - before the swap the file is read again under the lock and compared
//     byte for byte with the first read (compare-and-swap): bytes appended
//     at the end are carried into the result, any other change aborts;
//   - the result is verified (regions, sizes, pinned facts, kept sections,
//     archive) before a backup is written and the file is replaced
//     atomically; appends that reach the old file after the swap are
//     salvaged into the new one;
//   - every abort leaves the file as it was, is logged as a condense-abort
//     event with a reason (see the Reason constants), and backs the agent
//     off exponentially; a success resets the backoff.
package reflector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/hivemem/hivemem/internal/atomicio"
	"github.com/hivemem/hivemem/internal/config"
	"github.com/hivemem/hivemem/internal/eventlog"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/memfile"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/summarize"
)

// Defaults for Deps fields left zero.
const (
	DefaultLockTimeout  = 30 * time.Second
	DefaultSalvageGrace = atomicio.DefaultSalvageGrace
)

// Deps is what a Reflector works with.
type Deps struct {
	Home home.Home
	// Settings is called at the start of every condensation and pass, so a
	// changed config applies on the next one without a restart. nil uses
	// config.Default().
	Settings func() config.Config
	// Events receives condense, condense-abort and restore events; nil logs
	// none.
	Events *eventlog.Log
	// Miner re-mines the archive and the memory file after a swap, so
	// search follows the move; nil skips mining.
	Miner  palace.Miner
	Logger *slog.Logger
	// Summarizer overrides the configured one (tests, benchmarks); nil
	// builds it from Settings().Summarizer on every condensation.
	Summarizer summarize.Summarizer
	// Embedder gives the built-in extractive summariser sentence vectors
	// (the palace's model); nil makes it use word overlap.
	Embedder summarize.Embedder
	// LockTimeout bounds each wait for a file lock (default 30 s).
	LockTimeout time.Duration
	// SalvageGrace is how long after the swap the old file is watched for
	// appends by agents that opened it just before the rename (default
	// 25 ms; negative checks only once, at once).
	SalvageGrace time.Duration
	// Now is the clock (default time.Now), for tests of backoff and names.
	Now func() time.Time
}

// Reflector condenses agents' memory files. It is safe for concurrent use;
// condensations of one agent run one at a time, in process and across
// processes (the agent's condense lock, see acquire); the memory file's
// lock and compare-and-swap guard against every other writer.
type Reflector struct {
	home         home.Home
	settingsFn   func() config.Config
	events       *eventlog.Log
	miner        palace.Miner
	log          *slog.Logger
	sum          summarize.Summarizer
	emb          summarize.Embedder
	lockTimeout  time.Duration
	salvageGrace time.Duration
	now          func() time.Time
	// swapFile is atomicio.Swap with the salvage grace; tests replace it to
	// fail the swap or to act inside it.
	swapFile func(path string, old *os.File, off int64, data []byte) (atomicio.SwapResult, error)

	mu   sync.Mutex
	sems map[string]chan struct{}
	// owed holds the files whose mine after a swap (or restore) failed or
	// was cancelled: the index still describes what they held before, so
	// every pass mines them again until a mine succeeds.
	owed map[string]bool
}

// New returns a Reflector over d.Home.
func New(d Deps) *Reflector {
	r := &Reflector{
		home: d.Home, settingsFn: d.Settings, events: d.Events, miner: d.Miner, log: d.Logger,
		sum: d.Summarizer, emb: d.Embedder, lockTimeout: d.LockTimeout, salvageGrace: d.SalvageGrace, now: d.Now,
		sems: map[string]chan struct{}{}, owed: map[string]bool{},
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	if r.lockTimeout <= 0 {
		r.lockTimeout = DefaultLockTimeout
	}
	if r.salvageGrace == 0 {
		r.salvageGrace = DefaultSalvageGrace
	}
	r.swapFile = func(path string, old *os.File, off int64, data []byte) (atomicio.SwapResult, error) {
		return atomicio.Swap(path, old, off, data, 0o644, r.salvageGrace)
	}
	if r.now == nil {
		r.now = time.Now
	}
	return r
}

// settings returns the live config with unusable values clamped, so a bad
// getter cannot make a condensation evict everything or keep no backup.
func (r *Reflector) settings() config.Config {
	cfg := config.Default()
	if r.settingsFn != nil {
		cfg = r.settingsFn()
	}
	cfg.Reflector.RecentKeep = max(cfg.Reflector.RecentKeep, 1)
	cfg.Reflector.Retention = max(cfg.Reflector.Retention, 1)
	return cfg
}

// Interval is the configured time between automatic passes, read live.
func (r *Reflector) Interval() time.Duration {
	return r.settings().Reflector.Interval.Duration
}

// SummarizerConfig maps the config file's summarizer section to the
// summarize package's settings.
func SummarizerConfig(c config.Summarizer) summarize.Config {
	return summarize.Config{
		Provider: c.Provider, Model: c.Model, BaseURL: c.BaseURL, APIKey: c.APIKey,
		Command: c.Command, Timeout: c.Timeout.Duration,
	}
}

func (r *Reflector) summarizer(cfg config.Config) (summarize.Summarizer, error) {
	if r.sum != nil {
		return r.sum, nil
	}
	sc := SummarizerConfig(cfg.Summarizer)
	sc.Embedder = r.emb
	return summarize.New(sc)
}

// Summarizer says which summariser condenses with the live config, for
// status pages: its provider, model and, for the built-in one, whether it
// has sentence vectors.
func (r *Reflector) Summarizer() string {
	cfg := r.settings()
	if r.sum != nil {
		return summarize.Describe(r.sum)
	}
	sum, err := r.summarizer(cfg)
	if err != nil {
		return cfg.Summarizer.Provider + " (misconfigured: " + err.Error() + ")"
	}
	return summarize.Describe(sum)
}

// withPointer ends a summary with the line that says where the full text
// of the evicted sections is (a summariser that wrote it itself does not
// get it twice). An empty summary stays empty, so verification refuses it.
func (r *Reflector) withPointer(agent, condensed string) string {
	text := summarize.StripArchivePointer(condensed)
	dir, err := r.home.ArchiveDir(agent)
	if err != nil || memfile.IsPlaceholderBody(text) {
		return text
	}
	return text + "\n\n" + summarize.ArchivePointer(r.home.Rel(dir)+"/")
}

// Options controls one condensation.
type Options struct {
	// DryRun computes and verifies the would-be file without writing
	// anything: no archive, no backup, no event, no backoff change. It
	// ignores backoff and reflector.enabled (it changes nothing), but
	// honours the triggers unless Force is set.
	DryRun bool
	// Force skips the triggers and the backoff (`reflect --now`), but not
	// reflector.enabled = false: a disabled reflector never rewrites files.
	Force bool
}

// Result statuses.
const (
	StatusCondensed = "condensed"
	StatusAborted   = "aborted"
	StatusSkipped   = "skipped"
	StatusDryRun    = "dry-run"
)

// Skip reasons: why a file was left alone without that being a failure.
const (
	SkipDisabled       = "disabled"
	SkipNoFile         = "no-memory-file"
	SkipBelowMin       = "too-small" // the harness reflector's name
	SkipUnderTrigger   = "under-trigger"
	SkipNothingToEvict = "nothing-to-evict"
	SkipBackoff        = "backoff"
	// SkipBusy: another condensation (or restore) of the agent held its
	// condense lock for the whole lock timeout, in this or another
	// process.
	SkipBusy = "busy"
	// SkipRestored: the file was restored from a backup and has not
	// changed since; only a forced condensation touches it.
	SkipRestored = "restored"
)

// Result says what one condensation did.
type Result struct {
	Agent      string `json:"agent"`
	Status     string `json:"status"`
	Reason     string `json:"reason,omitempty"`
	Message    string `json:"message,omitempty"`
	Summarizer string `json:"summarizer,omitempty"`
	OldBytes   int64  `json:"old_bytes"`
	NewBytes   int64  `json:"new_bytes,omitempty"`
	Sections   int    `json:"sections"` // ordinary sections in the file read
	Evicted    int    `json:"evicted"`
	Kept       int    `json:"kept"`
	Hoisted    int    `json:"hoisted"`
	// AppendedBytes were appended by agents during the summary and carried
	// into the result; SalvagedBytes reached the old file after the swap
	// and were appended to the new one.
	AppendedBytes int64      `json:"appended_bytes,omitempty"`
	SalvagedBytes int64      `json:"salvaged_bytes,omitempty"`
	Archive       string     `json:"archive,omitempty"`
	Backup        string     `json:"backup,omitempty"` // backup name, for Restore
	BackupPath    string     `json:"backup_path,omitempty"`
	Failures      int        `json:"failures,omitempty"`
	NextAttempt   *time.Time `json:"next_attempt,omitempty"`
	MineError     string     `json:"mine_error,omitempty"`
	DurationMS    int64      `json:"duration_ms"`
	// Before and Output are the file read and the would-be file of a dry
	// run.
	Before []byte `json:"-"`
	Output []byte `json:"-"`
}

// AbortError is returned by Condense when a condensation aborted; Reason is
// one of the Reason constants.
type AbortError struct {
	Agent   string
	Reason  string
	Message string
	Err     error
}

func (e *AbortError) Error() string {
	return fmt.Sprintf("condense %s aborted (%s): %s", e.Agent, e.Reason, e.Message)
}

func (e *AbortError) Unwrap() error { return e.Err }

// Pass runs one automatic pass: first the files whose mine after a swap
// failed are mined again, then every agent with a memory file is
// condensed if reflector.enabled, its triggers fire and it is not backing
// off. Aborts are reported in the results, not as the error; the error is
// only for a pass that could not run (agents not listable, ctx done).
func (r *Reflector) Pass(ctx context.Context) ([]Result, error) {
	r.mineOwed(ctx)
	agents, err := r.home.Agents()
	if err != nil {
		return nil, fmt.Errorf("reflector pass: %w", err)
	}
	out := make([]Result, 0, len(agents))
	for _, a := range agents {
		if err := ctx.Err(); err != nil {
			return out, fmt.Errorf("reflector pass: %w", err)
		}
		res, err := r.Condense(ctx, a, Options{})
		var ae *AbortError
		if err != nil && !errors.As(err, &ae) {
			return out, fmt.Errorf("reflector pass: %s: %w", a, err)
		}
		out = append(out, res)
	}
	return out, nil
}

// Triggered applies the triggers to a file of size bytes with the given
// number of ordinary sections: skip below MinBytes; condense above
// ByteTriggerPct % of BudgetBytes or above SectionTrigger sections. When it
// returns false, reason and msg say why not.
func Triggered(rc config.Reflector, size int64, sections int) (ok bool, reason, msg string) {
	if size < rc.MinBytes {
		return false, SkipBelowMin, fmt.Sprintf("%d bytes, below min_bytes %d", size, rc.MinBytes)
	}
	if rc.BudgetBytes > 0 && rc.ByteTriggerPct > 0 && size*100 > rc.BudgetBytes*int64(rc.ByteTriggerPct) {
		return true, "", ""
	}
	if rc.SectionTrigger > 0 && sections > rc.SectionTrigger {
		return true, "", ""
	}
	return false, SkipUnderTrigger, fmt.Sprintf("%d bytes (trigger above %d%% of %d) and %d sections (trigger above %d)",
		size, rc.ByteTriggerPct, rc.BudgetBytes, sections, rc.SectionTrigger)
}

// CondenseLockName names the per-agent condense lock in the agent's
// directory (the lock file is atomicio.LockPath of it, under
// palace/locks/).
const CondenseLockName = ".condense"

// errNoAgentDir is acquire's error when the agent has no directory (and so
// no memory file) to lock.
var errNoAgentDir = errors.New("no agent directory")

// acquire serialises condensations (and restores) of one agent: within
// this process by a semaphore, across processes (`run`'s reflector, a CLI
// `reflect`, a second `reflect`) by a flock on the agent's condense lock,
// held for the whole condensation, summary included. It waits for the lock
// up to the lock timeout; the error then wraps atomicio.ErrLocked.
func (r *Reflector) acquire(ctx context.Context, agent string) (func(), error) {
	r.mu.Lock()
	ch := r.sems[agent]
	if ch == nil {
		ch = make(chan struct{}, 1)
		r.sems[agent] = ch
	}
	r.mu.Unlock()
	select {
	case ch <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	dir, err := r.home.AgentDir(agent)
	if err != nil {
		<-ch
		return nil, err
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		<-ch
		return nil, fmt.Errorf("%s: %w", dir, errNoAgentDir)
	}
	lctx, cancel := context.WithTimeout(ctx, r.lockTimeout)
	unlock, err := atomicio.Lock(lctx, filepath.Join(dir, CondenseLockName))
	cancel()
	if err != nil {
		<-ch
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("another condensation of %s is running: %w", agent, err)
	}
	return func() {
		if err := unlock(); err != nil {
			r.log.Warn("reflector: unlock condense lock", "agent", agent, "err", err)
		}
		<-ch
	}, nil
}

// run is one condensation in progress.
type run struct {
	r     *Reflector
	ctx   context.Context
	agent string
	opts  Options
	start time.Time
	res   Result
	// archives are the archive files this run appended to, mined after
	// the swap.
	archives []string
}

// Condense condenses one agent's memory file (see the package comment for
// the pipeline). A skip is a Result with Status "skipped" and a nil error;
// an abort is a Result with Status "aborted" and an *AbortError. Any other
// error means the request itself was bad (an invalid agent id).
func (r *Reflector) Condense(ctx context.Context, agent string, opts Options) (Result, error) {
	if err := home.ValidateAgentID(agent); err != nil {
		return Result{Agent: agent}, fmt.Errorf("condense: %w", err)
	}
	ru := &run{r: r, ctx: ctx, agent: agent, opts: opts, start: time.Now(), res: Result{Agent: agent}}
	release, err := r.acquire(ctx, agent)
	switch {
	case errors.Is(err, errNoAgentDir):
		return ru.skip(SkipNoFile, "no memory file: "+err.Error())
	case errors.Is(err, atomicio.ErrLocked):
		// Another process condenses this agent right now: what it does
		// is what this run would do.
		return ru.skip(SkipBusy, err.Error())
	case err != nil:
		return Result{Agent: agent, Status: StatusAborted, Reason: ReasonCanceled, Message: err.Error()},
			&AbortError{Agent: agent, Reason: ReasonCanceled, Message: err.Error(), Err: err}
	}
	defer release()
	return ru.condense()
}

func (ru *run) condense() (Result, error) {
	r, ctx := ru.r, ru.ctx
	cfg := r.settings()
	rc := cfg.Reflector
	if !rc.Enabled && !ru.opts.DryRun {
		return ru.skip(SkipDisabled, "reflector.enabled is false")
	}
	if !ru.opts.Force && !ru.opts.DryRun {
		if ok, st := r.Due(ru.agent); !ok {
			next := st.NextAttempt
			ru.res.NextAttempt, ru.res.Failures = &next, st.Failures
			return ru.skip(SkipBackoff, fmt.Sprintf("%d consecutive failures (last: %s); next attempt at %s",
				st.Failures, st.LastReason, next.UTC().Format(time.RFC3339)))
		}
	}
	path, err := r.home.MemoryPath(ru.agent)
	if err != nil {
		return ru.res, err
	}
	if _, err := r.home.Contain(path); err != nil {
		return ru.res, err // never condense (write) through a link out of the home
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return ru.skip(SkipNoFile, "no memory file at "+path)
	}

	// 1. Lock, read, unlock: remember the exact bytes.
	data, err := r.readLocked(ctx, path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return ru.skip(SkipNoFile, "no memory file at "+path)
		}
		return ru.abortErr(err)
	}
	ru.res.OldBytes = int64(len(data))
	f, err := memfile.Parse(data)
	if err != nil {
		return ru.abort(ReasonParseFailed, err.Error(), err)
	}
	ordinary := f.Recent()
	ru.res.Sections = len(ordinary)
	if !ru.opts.Force {
		if h := r.State(ru.agent).Restored; h != nil {
			if h.holds(data) {
				return ru.skip(SkipRestored, fmt.Sprintf("restored from backup %s at %s and unchanged since: left alone until the file changes or a forced condensation (reflect --now)",
					h.Backup, h.At.UTC().Format(time.RFC3339)))
			}
			if !ru.opts.DryRun {
				r.setRestored(ctx, ru.agent, nil) // the file changed: back to normal
			}
		}
	}
	if !ru.opts.Force {
		if ok, reason, msg := Triggered(rc, int64(len(data)), len(ordinary)); !ok {
			return ru.skip(reason, msg)
		}
	}

	// 2. Split: the newest RecentKeep sections stay, the older ones go.
	p := newPlan(f, rc.RecentKeep)
	ru.res.Evicted, ru.res.Kept = len(p.evicted), len(p.kept)
	if len(p.evicted) == 0 {
		return ru.skip(SkipNothingToEvict, fmt.Sprintf("%d sections, all within recent_keep %d", len(ordinary), rc.RecentKeep))
	}
	sum, err := r.summarizer(cfg)
	if err != nil {
		return ru.abort(ReasonSummarizerConfig, err.Error(), err)
	}
	ru.res.Summarizer = sum.Name()

	// 3. Archive first, so search finds the evicted sections whatever
	// happens next.
	if !ru.opts.DryRun {
		written, _, err := r.appendArchive(ctx, ru.agent, p.evicted, cfg.Palace.MaxFileBytes)
		ru.archives = written
		if len(written) > 0 {
			ru.res.Archive = written[len(written)-1]
		} else if apath, perr := r.archivePath(ru.agent, r.now()); perr == nil {
			// All archived already (an earlier attempt aborted after
			// archiving): mine the whole archive after the swap, in
			// case that attempt's files were never mined.
			ru.res.Archive = apath
			ru.archives = []string{filepath.Dir(apath)}
		}
		if err != nil {
			if reason := lockReason(ctx, err); reason != "" {
				return ru.abort(reason, err.Error(), err)
			}
			return ru.abort(ReasonArchiveFailed, err.Error(), err)
		}
	}

	// 4. Summarise, without holding the lock.
	out, err := sum.Summarize(ctx, summarize.Request{
		Agent: ru.agent, OldCondensed: summarize.StripArchivePointer(f.Condensed()), Evicted: p.toSummarise(),
		Pinned: f.Pinned(), WordBudget: rc.WordBudget,
	})
	if err != nil {
		if ctx.Err() != nil {
			return ru.abort(ReasonCanceled, err.Error(), err)
		}
		return ru.abort(ReasonSummarizeFailed, err.Error(), err)
	}
	out.Condensed = r.withPointer(ru.agent, out.Condensed)

	if ru.opts.DryRun {
		newData := p.build(out.Condensed, out.Hoist)
		nf, chk := verify(verifyInput{plan: p, out: newData, oldSize: len(data)})
		if chk != nil {
			return ru.abort(chk.reason, chk.msg, nil)
		}
		ru.res.Status = StatusDryRun
		ru.res.NewBytes, ru.res.Hoisted = int64(len(newData)), p.hoisted(nf)
		ru.res.Before, ru.res.Output = data, newData
		ru.res.DurationMS = time.Since(ru.start).Milliseconds()
		return ru.res, nil
	}
	return ru.swap(cfg, path, data, p, out)
}

// swap is steps 5-7: lock again, compare-and-swap, verify, back up, write,
// salvage late appends, unlock; then prune, log and mine.
func (ru *run) swap(cfg config.Config, path string, data []byte, p plan, out summarize.Result) (Result, error) {
	r, ctx := ru.r, ru.ctx
	lctx, cancel := context.WithTimeout(ctx, r.lockTimeout)
	unlock, err := atomicio.Lock(lctx, path)
	cancel()
	if err != nil {
		return ru.abortErr(err)
	}
	locked := true
	defer func() {
		if locked {
			if err := unlock(); err != nil {
				r.log.Warn("reflector: unlock", "path", path, "err", err)
			}
		}
	}()

	if _, err := atomicio.Recover(path); err != nil {
		return ru.abort(ReasonReadFailed, err.Error(), err)
	}
	fh, err := atomicio.OpenRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return ru.abort(ReasonChanged, "the memory file was removed during the summary", err)
	}
	if err != nil {
		return ru.abort(ReasonReadFailed, err.Error(), err)
	}
	defer fh.Close()
	cur, err := io.ReadAll(fh)
	if err != nil {
		return ru.abort(ReasonReadFailed, fmt.Sprintf("read %s: %v", path, err), err)
	}

	// Compare-and-swap: only appends at the end can be carried.
	if !bytes.HasPrefix(cur, data) {
		return ru.abort(ReasonChanged, "the file changed during the summary other than by appends at its end", nil)
	}
	carried := len(cur) - len(data)
	if carried > 0 {
		cf, err := memfile.Parse(cur)
		if err != nil {
			return ru.abort(ReasonChanged, "text appended during the summary does not parse: "+err.Error(), err)
		}
		if p, err = replan(cf, p); err != nil {
			return ru.abort(ReasonChanged, "text appended during the summary cannot be carried: "+err.Error(), err)
		}
	}
	ru.res.AppendedBytes = int64(carried)

	newData := p.build(out.Condensed, out.Hoist)
	arch, err := r.readArchive(ru.agent)
	if err != nil {
		return ru.abort(ReasonArchiveFailed, err.Error(), err)
	}
	nf, chk := verify(verifyInput{plan: p, out: newData, oldSize: len(data), carried: carried, archive: arch})
	if chk != nil {
		return ru.abort(chk.reason, chk.msg, nil)
	}
	ru.res.Hoisted = p.hoisted(nf)
	ru.res.Kept = len(p.kept)
	if err := ctx.Err(); err != nil {
		return ru.abort(ReasonCanceled, err.Error(), err)
	}

	// Back up only now, right before the swap, so an aborted attempt
	// leaves no backup behind.
	b, err := writeBackup(r.home, ru.agent, cur, r.now())
	if err != nil {
		return ru.abort(ReasonBackupFailed, err.Error(), err)
	}
	sw, err := r.swapFile(path, fh, int64(len(cur)), newData)
	switch {
	case !sw.Swapped:
		_ = removeBackupDir(r.home, b.Name, ru.agent)
		if errors.Is(err, atomicio.ErrReplaced) {
			return ru.abort(ReasonChanged, "another program replaced the file during the swap", err)
		}
		return ru.abort(ReasonWriteFailed, err.Error(), err)
	case err != nil:
		// Swapped, but the directory fsync or carrying a late append
		// failed: the replaced file is kept, and the next locked access
		// carries what it holds.
		r.log.Warn("reflector: memory file swapped with an error", "agent", ru.agent, "err", err)
	}
	salvaged := sw.Salvaged
	if salvaged > 0 {
		r.log.Info("reflector: salvaged a late append", "path", path, "bytes", salvaged)
	}
	locked = false
	if err := unlock(); err != nil {
		r.log.Warn("reflector: unlock", "path", path, "err", err)
	}

	ru.res.Status = StatusCondensed
	ru.res.NewBytes = int64(len(newData)) + salvaged
	ru.res.SalvagedBytes = salvaged
	ru.res.Backup, ru.res.BackupPath = b.Name, b.Path
	if _, err := pruneBackups(r.home, ru.agent, cfg.Reflector.Retention); err != nil {
		r.log.Warn("reflector: prune backups", "agent", ru.agent, "err", err)
	}
	r.recordSuccess(ctx, ru.agent)
	ru.res.DurationMS = time.Since(ru.start).Milliseconds()
	r.event("condense", ru.agent, "", ru.eventData())
	var mineErrs []error
	for _, a := range ru.archives {
		mineErrs = append(mineErrs, r.mine(ctx, a))
	}
	mineErrs = append(mineErrs, r.mine(ctx, path))
	if err := errors.Join(mineErrs...); err != nil {
		ru.res.MineError = err.Error()
	}
	return ru.res, nil
}

// readLocked reads path under its lock, so it never sees a half-finished
// write by another hivemem writer.
func (r *Reflector) readLocked(ctx context.Context, path string) ([]byte, error) {
	lctx, cancel := context.WithTimeout(ctx, r.lockTimeout)
	defer cancel()
	unlock, err := atomicio.Lock(lctx, path)
	if err != nil {
		return nil, err
	}
	_, rerr := atomicio.Recover(path)
	var data []byte
	if rerr == nil {
		data, rerr = atomicio.ReadRegular(path)
	}
	uerr := unlock()
	if rerr != nil {
		return nil, rerr
	}
	if uerr != nil {
		return nil, fmt.Errorf("unlock %s: %w", path, uerr)
	}
	return data, nil
}

// lockReason classifies a lock failure: "canceled" when ctx ended,
// "locked" when the lock stayed busy, "" for other errors.
func lockReason(ctx context.Context, err error) string {
	switch {
	case ctx.Err() != nil:
		return ReasonCanceled
	case errors.Is(err, atomicio.ErrLocked):
		return ReasonLocked
	}
	return ""
}

func (ru *run) abortErr(err error) (Result, error) {
	if reason := lockReason(ru.ctx, err); reason != "" {
		return ru.abort(reason, err.Error(), err)
	}
	return ru.abort(ReasonReadFailed, err.Error(), err)
}

func (ru *run) skip(reason, msg string) (Result, error) {
	ru.res.Status, ru.res.Reason, ru.res.Message = StatusSkipped, reason, msg
	ru.res.DurationMS = time.Since(ru.start).Milliseconds()
	return ru.res, nil
}

// Benign reports whether an abort (or skip) reason says "nothing to do":
// the file is fine as it is, condensing it now would gain nothing (the
// result is not smaller, nothing is old enough to evict). Such an abort is
// not a failure: it sets no backoff, and `reflect --now` exits 0 for it.
// Keyed to the reason constants, so renaming a reason keeps it benign.
func Benign(reason string) bool {
	switch reason {
	case ReasonNotSmaller, SkipNothingToEvict:
		return true
	}
	return false
}

// abort ends a condensation without touching the memory file: it logs a
// condense-abort event and backs the agent off (not for dry runs; a
// cancellation is not held against the file, nor is a benign abort).
func (ru *run) abort(reason, msg string, cause error) (Result, error) {
	ru.res.Status, ru.res.Reason, ru.res.Message = StatusAborted, reason, msg
	ru.res.DurationMS = time.Since(ru.start).Milliseconds()
	if !ru.opts.DryRun {
		if reason != ReasonCanceled && !Benign(reason) {
			st := ru.r.recordFailure(ru.ctx, ru.agent, reason, msg)
			if st.Failures > 0 {
				next := st.NextAttempt
				ru.res.Failures, ru.res.NextAttempt = st.Failures, &next
			}
		}
		ru.r.event("condense-abort", ru.agent, reason, ru.eventData())
	}
	if Benign(reason) {
		ru.r.log.Info("reflector: nothing to condense", "agent", ru.agent, "reason", reason, "msg", msg)
	} else {
		ru.r.log.Warn("reflector: condensation aborted", "agent", ru.agent, "reason", reason, "msg", msg)
	}
	return ru.res, &AbortError{Agent: ru.agent, Reason: reason, Message: msg, Err: cause}
}

// eventData is the condense / condense-abort event payload, in the field
// names of the harness's reflector (oldBytes, newBytes, evicted, kept,
// hoisted, backup; an abort's detail), which shares the hive log; the
// rest is hivemem's own.
func (ru *run) eventData() map[string]any {
	res := ru.res
	d := map[string]any{
		"oldBytes": res.OldBytes, "sections": res.Sections, "evicted": res.Evicted, "kept": res.Kept,
		"durationMs": res.DurationMS, "force": ru.opts.Force,
	}
	add := func(k string, v any, ok bool) {
		if ok {
			d[k] = v
		}
	}
	add("newBytes", res.NewBytes, res.Status == StatusCondensed || res.NewBytes > 0)
	add("hoisted", res.Hoisted, res.Status == StatusCondensed)
	add("detail", res.Message, res.Message != "")
	add("summarizer", res.Summarizer, res.Summarizer != "")
	add("archive", ru.r.home.Rel(res.Archive), res.Archive != "")
	add("backup", ru.r.home.Rel(res.BackupPath), res.BackupPath != "")
	add("appendedBytes", res.AppendedBytes, res.AppendedBytes > 0)
	add("salvagedBytes", res.SalvagedBytes, res.SalvagedBytes > 0)
	add("failures", res.Failures, res.Failures > 0)
	return d
}

func (r *Reflector) event(typ, agent, reason string, data map[string]any) {
	if r.events == nil {
		return
	}
	if err := r.events.Append(eventlog.Event{Kind: typ, Agent: agent, Reason: reason, Data: data}); err != nil {
		r.log.Warn("reflector: cannot log event", "type", typ, "agent", agent, "err", err)
	}
}

// mine re-mines path so search follows a swap; a failure is reported, not
// fatal: the file is already in place. A path whose mine failed (or was
// cancelled) stays owed and the next pass mines it again, so the index
// converges on what a reindex gives even when nothing else touches the
// file again.
func (r *Reflector) mine(ctx context.Context, path string) error {
	if r.miner == nil {
		return nil
	}
	_, err := r.miner.Mine(ctx, path, palace.MineOptions{})
	r.mu.Lock()
	if err != nil {
		r.owed[path] = true
	} else {
		delete(r.owed, path)
	}
	r.mu.Unlock()
	if err != nil {
		r.log.Warn("reflector: mine after swap", "path", path, "err", err)
		return fmt.Errorf("mine %s: %w", path, err)
	}
	return nil
}

// mineOwed mines again the files whose mine after a swap failed; each
// one that fails again stays owed.
func (r *Reflector) mineOwed(ctx context.Context) {
	r.mu.Lock()
	paths := make([]string, 0, len(r.owed))
	for p := range r.owed {
		paths = append(paths, p)
	}
	r.mu.Unlock()
	slices.Sort(paths)
	for _, p := range paths {
		if ctx.Err() != nil {
			return
		}
		_ = r.mine(ctx, p) // logged by mine; still owed if it failed
	}
}
