package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"time"

	"github.com/rogpeppe/go-internal/diff"

	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/reflector"
)

// SHA256 is the hex sha256 of data, as CondenseRequest.IfMatch and the
// API's memory view give it.
func SHA256(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

var sha256RE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// CondenseRequest condenses one agent's memory file now (the body of
// POST /api/v1/agents/{agent}/condense, with the agent from the path).
type CondenseRequest struct {
	Agent  string `json:"-"` // "": the caller's (Scope.Caller)
	DryRun bool   `json:"dry_run"`
	Force  bool   `json:"force"`
	// IfMatch is the sha256 of the file the caller previewed; the
	// condensation is refused (ErrConflict) when the file changed since.
	IfMatch string `json:"if_match"`
	// Scope: a dry run writes nothing, so it reads as any read does; a
	// real condensation writes, only to the caller's own memory.
	Scope Scope `json:"-"`
}

// agent is whose file r condenses, under r's scope.
func (r CondenseRequest) agent() (string, error) {
	if r.DryRun {
		return r.Scope.readAgent(r.Agent)
	}
	return r.Scope.writeAgent(r.Agent)
}

// Validate checks the request; every error is ErrInvalid.
func (r CondenseRequest) Validate() error {
	if _, err := r.agent(); err != nil {
		return fmt.Errorf("condense: %w", err)
	}
	if r.IfMatch != "" && !sha256RE.MatchString(r.IfMatch) {
		return badRequest("if_match %q: want the file's sha256 as 64 lowercase hex digits", r.IfMatch)
	}
	return nil
}

// CondenseResult is the reflector's result, with a dry run's would-be
// file and its diff against the current one: the same object from
// `hivemem reflect --json` (one per agent), POST
// /api/v1/agents/{agent}/condense and MCP memory_condense.
type CondenseResult struct {
	Agent      string `json:"agent"`
	Status     string `json:"status"` // condensed, dry-run, skipped or aborted
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
	BeforeSHA256  string     `json:"before_sha256,omitempty"`
	Output        string     `json:"output,omitempty" jsonschema:"dry run: the would-be file"`
	Diff          string     `json:"diff,omitempty" jsonschema:"dry run: a unified diff from the current file to the would-be one"`
}

func condenseResult(res reflector.Result) CondenseResult {
	out := CondenseResult{Agent: res.Agent, Status: res.Status, Reason: res.Reason, Message: res.Message,
		Summarizer: res.Summarizer, OldBytes: res.OldBytes, NewBytes: res.NewBytes, Sections: res.Sections,
		Evicted: res.Evicted, Kept: res.Kept, Hoisted: res.Hoisted, AppendedBytes: res.AppendedBytes,
		SalvagedBytes: res.SalvagedBytes, Archive: res.Archive, Backup: res.Backup, BackupPath: res.BackupPath,
		Failures: res.Failures, NextAttempt: res.NextAttempt, MineError: res.MineError, DurationMS: res.DurationMS}
	if res.Status == reflector.StatusDryRun {
		out.BeforeSHA256 = SHA256(res.Before)
		out.Output = string(res.Output)
		out.Diff = string(diff.Diff(res.Agent+"/memory.md", res.Before, res.Agent+"/memory.md (condensed)", res.Output))
	}
	return out
}

// Condense validates r and condenses (or with DryRun previews) the
// agent's file through the app's reflector. An agent without a memory
// file is ErrNotFound (with the skipped result); an aborted condensation
// returns its result and a *reflector.AbortError.
func (a *App) Condense(ctx context.Context, r CondenseRequest) (CondenseResult, error) {
	if err := r.Validate(); err != nil {
		return CondenseResult{}, err
	}
	agent, _ := r.agent()
	if r.IfMatch != "" {
		path, _ := a.home.MemoryPath(agent)
		data, err := a.home.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return CondenseResult{}, notFound("agent %s has no memory file", agent)
		}
		if err != nil {
			return CondenseResult{}, fmt.Errorf("read memory of %s: %w", agent, err)
		}
		if got := SHA256(data); got != r.IfMatch {
			return CondenseResult{}, conflict("the memory file of %s changed since the preview (sha256 %s, expected %s): preview again", agent, got[:12], r.IfMatch[:12])
		}
	}
	if !r.DryRun {
		// Evicted sections go to the archive and the file to a backup: no
		// secret an agent appended by hand since the last mine may.
		if err := a.redactMemoryFiles(ctx, agent); err != nil {
			return CondenseResult{}, fmt.Errorf("condense: %w", err)
		}
	}
	res, err := a.reflector.Condense(ctx, agent, reflector.Options{DryRun: r.DryRun, Force: r.Force})
	if err == nil && res.Status == reflector.StatusSkipped && res.Reason == reflector.SkipNoFile {
		err = notFound("agent %s has no memory file", agent)
	}
	if res.Status == reflector.StatusCondensed {
		a.log.Info("condensed", "agent", agent, "old_bytes", res.OldBytes, "new_bytes", res.NewBytes, "backup", res.Backup)
	}
	return condenseResult(res), err
}

// CondensePass is one pass of the reflector over every agent, as its
// schedule runs it (triggers, backoff and reflector.enabled honoured).
func (a *App) CondensePass(ctx context.Context) ([]CondenseResult, error) {
	if err := a.RedactMemoryFiles(ctx); err != nil {
		return nil, fmt.Errorf("condense: %w", err)
	}
	rs, err := a.reflector.Pass(ctx)
	out := make([]CondenseResult, len(rs))
	for i, res := range rs {
		out[i] = condenseResult(res)
	}
	return out, err
}

// BackupInfo is one backup of an agent's memory file.
type BackupInfo struct {
	Agent string    `json:"agent"`
	Name  string    `json:"name"` // what Restore takes
	Path  string    `json:"path"` // relative to the home
	Size  int64     `json:"size"`
	Time  time.Time `json:"time"`
}

func (a *App) backupInfo(b reflector.Backup) BackupInfo {
	return BackupInfo{Agent: b.Agent, Name: b.Name, Path: a.home.Rel(b.Path), Size: b.Size, Time: b.Time}
}

// BackupsRequest lists backups: one agent's, or with Agent "" every
// agent's.
type BackupsRequest struct {
	Agent string `json:"agent,omitempty"`
	// Known requires the agent to have a memory file or backups
	// (ErrNotFound otherwise), as for reflect and restore.
	Known bool `json:"-"`
}

// Backups lists backups newest first: the same objects from `hivemem
// backups --json` and GET /api/v1/backups.
func (a *App) Backups(ctx context.Context, r BackupsRequest) ([]BackupInfo, error) {
	if r.Agent != "" {
		if err := home.ValidateAgentID(r.Agent); err != nil {
			return nil, invalid(err)
		}
	}
	bs, err := reflector.Backups(a.home, r.Agent)
	if err != nil {
		return nil, err
	}
	if r.Known && r.Agent != "" && len(bs) == 0 {
		// An agent whose file is gone may still have backups to restore;
		// one with neither is unknown.
		path, _ := a.home.MemoryPath(r.Agent)
		if _, err := a.home.ReadFile(path); errors.Is(err, fs.ErrNotExist) {
			return nil, notFound("agent %s has no memory file and no backups", r.Agent)
		}
	}
	out := make([]BackupInfo, 0, len(bs))
	for _, b := range bs {
		out = append(out, a.backupInfo(b))
	}
	return out, nil
}

// BackupRequest is one backup of an agent: a name, or reflector.Latest.
type BackupRequest struct {
	Agent   string `json:"agent"`
	Name    string `json:"name"`
	Content bool   `json:"content,omitempty"` // with the backup's text
}

// Validate checks the request; every error is ErrInvalid.
func (r BackupRequest) Validate() error {
	if err := home.ValidateAgentID(r.Agent); err != nil {
		return invalid(err)
	}
	if err := reflector.CheckBackupName(r.Agent, r.Name); err != nil {
		return invalid(err)
	}
	return nil
}

// backupKind maps the reflector's backup errors onto the app's kinds.
func backupKind(err error) error {
	switch {
	case errors.Is(err, reflector.ErrBadBackupName):
		return invalid(err)
	case errors.Is(err, reflector.ErrNoBackup):
		return kindError{ErrNotFound, err}
	}
	return err
}

// BackupDetail is one backup with what restoring it would change.
type BackupDetail struct {
	BackupInfo
	CurrentSHA256 string `json:"current_sha256,omitempty"`
	BackupSHA256  string `json:"backup_sha256"`
	Identical     bool   `json:"identical"`
	// Diff turns the current file into the backup: what a restore changes.
	Diff    string `json:"diff"`
	Content string `json:"content,omitempty"`
}

// Backup finds one backup (ErrNotFound when there is none such) and
// compares it with the current file.
func (a *App) Backup(ctx context.Context, r BackupRequest) (BackupDetail, error) {
	if err := r.Validate(); err != nil {
		return BackupDetail{}, err
	}
	b, err := reflector.FindBackup(a.home, r.Agent, r.Name)
	if err != nil {
		return BackupDetail{}, backupKind(err)
	}
	data, err := a.home.ReadFile(b.Path)
	if err != nil {
		return BackupDetail{}, fmt.Errorf("read backup %s of %s: %w", b.Name, r.Agent, err)
	}
	path, _ := a.home.MemoryPath(r.Agent)
	cur, err := a.home.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return BackupDetail{}, fmt.Errorf("read memory of %s: %w", r.Agent, err)
	}
	d := BackupDetail{BackupInfo: a.backupInfo(b), BackupSHA256: SHA256(data), Identical: string(cur) == string(data)}
	if cur != nil {
		d.CurrentSHA256 = SHA256(cur)
	}
	d.Diff = string(diff.Diff(r.Agent+"/memory.md (current)", cur, r.Agent+"/memory.md (backup "+b.Name+")", data))
	if r.Content {
		d.Content = string(data)
	}
	return d, nil
}

// RestoreRequest puts a backup (a name, or reflector.Latest) back.
type RestoreRequest struct {
	Agent  string `json:"agent"`
	Backup string `json:"backup"`
}

// Restore validates r and puts the backup back through the app's
// reflector (the current file backed up first, locked, atomic, logged,
// mined again under the palace write lock). A backup that does not exist
// is ErrNotFound.
func (a *App) Restore(ctx context.Context, r RestoreRequest) (RestoreResult, error) {
	if err := (BackupRequest{Agent: r.Agent, Name: r.Backup}).Validate(); err != nil {
		return RestoreResult{}, fmt.Errorf("restore: %w", err)
	}
	res, err := a.reflector.Restore(ctx, r.Agent, r.Backup)
	if err != nil {
		return RestoreResult(res), backupKind(err)
	}
	a.log.Info("restored", "agent", r.Agent, "backup", res.Backup, "pre_restore_backup", res.PreRestoreBackup)
	return RestoreResult(res), nil
}
