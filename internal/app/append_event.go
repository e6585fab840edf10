package app

import "github.com/hivemem/hivemem/internal/eventlog"

// AppendEvent adds ev to the home's event log (hive/log.jsonl).
func (a *App) AppendEvent(ev eventlog.Event) error {
	if a.events == nil {
		return nil
	}
	return a.events.Append(ev)
}
