package app

import (
	"sync"

	"github.com/hivemem/hivemem/internal/config"
)

// liveSettings is the configuration in force: config.toml as Open loaded
// it, then as the last ReloadSettings that loaded it left it.
type liveSettings struct {
	mu  sync.RWMutex
	cfg config.Config
	err error // of the last reload; nil when it loaded
}

func (l *liveSettings) set(cfg config.Config) {
	l.mu.Lock()
	l.cfg, l.err = cfg, nil
	l.mu.Unlock()
}

// Settings is the live configuration: config.toml as the process last
// loaded it (a running manager reloads it on SIGHUP and when the file
// changes; UpdateSettings after saving). The reflector reads it at every
// pass.
func (a *App) Settings() config.Config {
	a.settings.mu.RLock()
	defer a.settings.mu.RUnlock()
	return a.settings.cfg
}

// SettingsError is the error of the last ReloadSettings, nil when
// config.toml loaded: while it is set, the previous settings are in force.
func (a *App) SettingsError() error {
	a.settings.mu.RLock()
	defer a.settings.mu.RUnlock()
	return a.settings.err
}

// ReloadSettings re-reads config.toml and puts it in force. A file that
// does not load leaves the previous settings in force and is the error
// (SettingsError until the next reload that loads). Settings read live
// (search results, the reflector, the manager's intervals) apply at once;
// the index, the embedder and the search tuning keep what Open built.
func (a *App) ReloadSettings() (config.Config, error) {
	cfg, err := config.Load(a.home.ConfigPath())
	a.settings.mu.Lock()
	defer a.settings.mu.Unlock()
	if err != nil {
		a.settings.err = err
		return a.settings.cfg, err
	}
	a.settings.cfg, a.settings.err = cfg, nil
	return cfg, nil
}
