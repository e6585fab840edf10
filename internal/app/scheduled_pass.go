package app

import (
	"context"

	"github.com/hivemem/hivemem/internal/reflector"
)

// ScheduledPass is the manager's scheduled reflector pass over every
// agent (triggers, backoff and reflector.enabled honoured). Secrets
// appended by hand since the last mine are redacted first, so that none
// reaches an archive or a backup; a failure to redact is logged and the
// pass goes on. Each condensation, and each abort worth a look, is
// logged; the error is the pass's.
func (a *App) ScheduledPass(ctx context.Context) error {
	if err := a.RedactMemoryFiles(ctx); err != nil {
		a.log.Warn("reflector pass: redacting secrets in memory files", "err", err)
	}
	results, err := a.reflector.Pass(ctx)
	if err != nil {
		return err
	}
	for _, r := range results {
		switch r.Status {
		case reflector.StatusCondensed:
			a.log.Info("condensed", "agent", r.Agent, "old_bytes", r.OldBytes, "new_bytes", r.NewBytes,
				"evicted", r.Evicted, "kept", r.Kept, "backup", r.Backup)
		case reflector.StatusAborted:
			if r.Reason != reflector.ReasonCanceled && !reflector.Benign(r.Reason) {
				a.log.Warn("condensation aborted", "agent", r.Agent, "reason", r.Reason, "msg", r.Message, "failures", r.Failures)
			}
		default:
			a.log.Debug("not condensed", "agent", r.Agent, "reason", r.Reason)
		}
	}
	return nil
}
