package manager

// The live configuration: config.toml as of the last reload, which the app
// keeps (App.Settings) and the manager acts on.

import (
	"github.com/hivemem/hivemem/internal/config"
)

// Config is the live configuration: config.toml as of the last reload.
func (m *Manager) Config() config.Config { return m.app.Settings() }

// ConfigError is the error of the last reload of config.toml, nil when
// it loaded: while it is set, the previous settings are in force.
func (m *Manager) ConfigError() error { return m.app.SettingsError() }

// ReloadConfig re-reads config.toml now, as Reload does, and returns when
// the new settings are in force, with the error of the read (the previous
// settings then stay). It works before Run too.
func (m *Manager) ReloadConfig() error { return m.reload() }

// Reload asks the running manager to re-read config.toml (what SIGHUP
// does). It does not wait for the reload.
func (m *Manager) Reload() {
	select {
	case m.reloadCh <- struct{}{}:
	default:
	}
}

// reload re-reads config.toml (App.ReloadSettings) and acts on what
// changed since the settings it last acted on — also when App.UpdateSettings
// reloaded them already. A file that does not load leaves the previous
// settings in force. Settings read live (reflector, scan interval,
// debounce) apply at once; the rest needs a restart, and the log says
// which.
func (m *Manager) reload() error {
	m.reloadMu.Lock()
	defer m.reloadMu.Unlock()
	cfg, err := m.app.ReloadSettings()
	if err != nil {
		m.problem("config reload", err)
		m.log.Error("config reload failed; keeping the previous settings", "err", err)
		return err
	}
	old := m.seen
	var restart []string
	if old.Palace != cfg.Palace {
		restart = append(restart, "palace")
	}
	if old.Embedder != cfg.Embedder {
		restart = append(restart, "embedder")
	}
	if old.Search != cfg.Search {
		restart = append(restart, "search")
	}
	if old.Manager.HTTP != cfg.Manager.HTTP || old.Manager.Token != cfg.Manager.Token {
		restart = append(restart, "manager.http/manager.token")
	}
	m.seen = cfg
	if old.Manager.Mining != cfg.Manager.Mining {
		m.log.Info("mining switched", "on", cfg.Manager.Mining)
		if cfg.Manager.Mining {
			m.queue.addScan() // catch up with what changed while it was off
		}
	}
	select {
	case m.cfgChanged <- struct{}{}:
	default:
	}
	m.log.Info("config reloaded", "reflector_interval", cfg.Reflector.Interval.String(),
		"scan_interval", cfg.Manager.ScanInterval.String(), "debounce", cfg.Manager.Debounce.String())
	if len(restart) > 0 {
		m.log.Warn("changed settings take effect when hivemem run restarts", "sections", restart)
	}
	return nil
}
