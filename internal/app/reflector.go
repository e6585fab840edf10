package app

import (
	"github.com/hivemem/hivemem/internal/config"
	"github.com/hivemem/hivemem/internal/reflector"
)

// NewReflector wires a reflector to an open app, so every front end (CLI,
// MCP, the manager) condenses with the same home, config, event log and
// miner. The config loaded at Open is the one it reads; a long-running
// process that reloads config should build its own reflector.Deps.
func NewReflector(a *App) *reflector.Reflector {
	return reflector.New(reflector.Deps{
		Home: a.Home, Settings: func() config.Config { return a.Config },
		Events: a.Events, Miner: a.Palace, Logger: a.Log,
	})
}
