package app

import "github.com/hivemem/hivemem/internal/eventlog"

// SubscribeEvents tells, on the channel it returns, of every event this
// process appends to the event log (a live stream: EventsFrom reads what
// is written), until cancel is called. An app without an event log
// gives a nil channel, which never tells.
func (a *App) SubscribeEvents() (events <-chan eventlog.Event, cancel func()) {
	if a.events == nil {
		return nil, func() {}
	}
	return a.events.Subscribe()
}
