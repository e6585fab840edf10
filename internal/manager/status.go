package manager

import (
	"time"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/store"
)

// Status is what GET /api/v1/manager reports (and GET /api/v1/status
// carries as "manager"), and what `hivemem status` shows while a manager
// runs.
type Status struct {
	Instance
	UptimeSeconds float64          `json:"uptime_seconds"`
	Backend       string           `json:"backend"`
	SearchMode    string           `json:"search_mode"`
	Embedder      app.EmbedderInfo `json:"embedder"`
	Index         store.Stats      `json:"index"`
	Watching      int              `json:"watching"` // directories under watch
	Pending       int              `json:"pending"`  // agents changed and waiting to be mined
	// MineLagSeconds is the last mine's lag: from the first change to a
	// memory file it caught up with until that change was searchable
	// (debounce, queue and mining itself); LastMineLag is when it ended.
	MineLagSeconds float64   `json:"mine_lag_seconds"`
	LastMineLag    time.Time `json:"last_mine_lag,omitzero"`
	// UnminedAgeSeconds is the age of the oldest change not yet mined (0
	// when everything is mined): a growing value means mining falls
	// behind.
	UnminedAgeSeconds float64           `json:"unmined_age_seconds"`
	LastScan          time.Time         `json:"last_scan,omitzero"`
	NextScan          time.Time         `json:"next_scan,omitzero"`
	LastPass          time.Time         `json:"last_reflector_pass,omitzero"`
	NextPass          time.Time         `json:"next_reflector_pass,omitzero"`
	Problems          []Problem         `json:"problems"` // recent manager-level errors, newest last
	Mining            bool              `json:"mining"`   // manager.mining: false stops mining and condensing
	Agents            []app.AgentStatus `json:"agents"`
}

// Problem is a manager-level error (watcher, config reload, archive scan)
// kept for status pages.
type Problem struct {
	Time  time.Time `json:"time"`
	What  string    `json:"what"`
	Error string    `json:"error"`
}
