package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hivemem/hivemem/internal/atomicio"
	"github.com/hivemem/hivemem/internal/config"
	"github.com/hivemem/hivemem/internal/tomledit"
)

// ReflectorSettings are the reflector's settings as the API shows them,
// named like the keys of config.toml's [reflector] table.
type ReflectorSettings struct {
	Enabled        bool   `json:"enabled"`
	MinBytes       int64  `json:"min_bytes"`
	BudgetBytes    int64  `json:"budget_bytes"`
	ByteTriggerPct int    `json:"byte_trigger_pct"`
	SectionTrigger int    `json:"section_trigger"`
	RecentKeep     int    `json:"recent_keep"`
	Interval       string `json:"interval"`
	Retention      int    `json:"retention"`
	WordBudget     int    `json:"word_budget"`
}

func reflectorSettings(r config.Reflector) ReflectorSettings {
	return ReflectorSettings{
		Enabled: r.Enabled, MinBytes: r.MinBytes, BudgetBytes: r.BudgetBytes, ByteTriggerPct: r.ByteTriggerPct,
		SectionTrigger: r.SectionTrigger, RecentKeep: r.RecentKeep, Interval: ShortDuration(r.Interval.Duration),
		Retention: r.Retention, WordBudget: r.WordBudget,
	}
}

// ShortDuration prints a duration without zero units: 30m, 1h, 1h30m.
func ShortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// ManagerSettings are the [manager] settings the dashboard changes.
type ManagerSettings struct {
	// Mining is manager.mining: false stops mining and condensing (search
	// and wake-up still answer).
	Mining bool `json:"mining"`
}

// SettingsResult is what ReadSettings and UpdateSettings return (GET and PATCH
// /api/v1/settings). Secrets (API keys, the token) are never included.
type SettingsResult struct {
	ConfigPath string            `json:"config_path"`
	Reflector  ReflectorSettings `json:"reflector"`
	Manager    ManagerSettings   `json:"manager"`
	// EnvOverrides lists the HIVEMEM_REFLECTOR_* variables (and
	// HIVEMEM_MANAGER_MINING) that are set:
	// they win over config.toml, so saving those keys here has no effect.
	EnvOverrides []string       `json:"env_overrides"`
	Summarizer   map[string]any `json:"summarizer"`
	Search       map[string]any `json:"search"`
	Editable     bool           `json:"editable"` // UpdateSettings is possible (settings are read from config.toml)
	ConfigError  string         `json:"config_error,omitempty"`
	Warnings     []string       `json:"warnings,omitempty"`
}

// ReadSettings reports the live settings, and the error of the last
// reload of config.toml when it did not load.
func (a *App) ReadSettings() SettingsResult {
	cfg := a.Settings()
	resp := SettingsResult{
		ConfigPath: a.home.ConfigPath(), Reflector: reflectorSettings(cfg.Reflector),
		Manager:      ManagerSettings{Mining: cfg.Manager.Mining},
		EnvOverrides: settingsEnvOverrides(),
		Summarizer:   map[string]any{"provider": cfg.Summarizer.Provider, "model": cfg.Summarizer.Model, "timeout": ShortDuration(cfg.Summarizer.Timeout.Duration)},
		Search: map[string]any{
			"mode": a.palace.Mode(), "results": cfg.Search.Results, "wake_up_budget": cfg.Search.WakeUpBudget,
			"fusion": cfg.Search.Fusion, "vector_weight": cfg.Search.VectorWeight,
		},
		Editable: true,
	}
	if err := a.SettingsError(); err != nil {
		resp.ConfigError = err.Error()
	}
	return resp
}

// settingsEnvOverrides lists the set environment variables that override
// the keys UpdateSettings writes.
func settingsEnvOverrides() []string {
	out := []string{}
	for _, k := range config.EnvKeys() {
		if strings.HasPrefix(k, "HIVEMEM_REFLECTOR_") || k == "HIVEMEM_MANAGER_MINING" {
			if _, ok := os.LookupEnv(k); ok {
				out = append(out, k)
			}
		}
	}
	return out
}

// ReflectorPatch is a partial update of [reflector]: fields left out keep
// their value.
type ReflectorPatch struct {
	Enabled        *bool   `json:"enabled"`
	MinBytes       *int64  `json:"min_bytes"`
	BudgetBytes    *int64  `json:"budget_bytes"`
	ByteTriggerPct *int    `json:"byte_trigger_pct"`
	SectionTrigger *int    `json:"section_trigger"`
	RecentKeep     *int    `json:"recent_keep"`
	Interval       *string `json:"interval"`
	Retention      *int    `json:"retention"`
	WordBudget     *int    `json:"word_budget"`
}

// ManagerPatch is a partial update of the [manager] keys the dashboard
// changes.
type ManagerPatch struct {
	Mining *bool `json:"mining"`
}

// SettingsRequest is a partial update of config.toml (the body of PATCH
// /api/v1/settings).
type SettingsRequest struct {
	Reflector *ReflectorPatch `json:"reflector"`
	Manager   *ManagerPatch   `json:"manager"`
}

// Validate checks every given value (bad input: ErrInvalid).
func (r SettingsRequest) Validate() error {
	_, _, err := r.assignments()
	return err
}

// assignments are the request's TOML assignments, per table, in a fixed
// order.
func (r SettingsRequest) assignments() (reflector, manager []tomledit.Setting, err error) {
	if r.Reflector == nil && (r.Manager == nil || r.Manager.Mining == nil) {
		return nil, nil, badRequest(`nothing to change: want {"reflector": {...}} or {"manager": {"mining": true|false}}`)
	}
	if r.Reflector != nil {
		if reflector, err = r.Reflector.assignments(); err != nil {
			return nil, nil, invalid(err)
		}
	}
	if r.Manager != nil && r.Manager.Mining != nil {
		manager = []tomledit.Setting{{Key: "mining", Value: strconv.FormatBool(*r.Manager.Mining)}}
	}
	return reflector, manager, nil
}

// settings limits beyond config.Validate's: values that would make the
// reflector spin, never trigger, or keep absurd amounts.
const (
	maxSettingBytes = 1 << 30
	maxSettingCount = 1_000_000
	minInterval     = time.Second
	maxInterval     = 30 * 24 * time.Hour
)

// assignments checks each given value and returns them as TOML
// assignments in a fixed order.
func (p *ReflectorPatch) assignments() ([]tomledit.Setting, error) {
	var out []tomledit.Setting
	intIn := func(key string, v *int, lo, hi int) error {
		if v == nil {
			return nil
		}
		if *v < lo || *v > hi {
			return fmt.Errorf("reflector.%s = %d: want %d to %d", key, *v, lo, hi)
		}
		out = append(out, tomledit.Setting{Key: key, Value: strconv.Itoa(*v)})
		return nil
	}
	int64In := func(key string, v *int64, lo, hi int64) error {
		if v == nil {
			return nil
		}
		if *v < lo || *v > hi {
			return fmt.Errorf("reflector.%s = %d: want %d to %d", key, *v, lo, hi)
		}
		out = append(out, tomledit.Setting{Key: key, Value: strconv.FormatInt(*v, 10)})
		return nil
	}
	if p.Enabled != nil {
		out = append(out, tomledit.Setting{Key: "enabled", Value: strconv.FormatBool(*p.Enabled)})
	}
	err := errors.Join(
		int64In("min_bytes", p.MinBytes, 0, maxSettingBytes),
		int64In("budget_bytes", p.BudgetBytes, 1024, maxSettingBytes),
		intIn("byte_trigger_pct", p.ByteTriggerPct, 1, 100),
		intIn("section_trigger", p.SectionTrigger, 0, maxSettingCount),
		intIn("recent_keep", p.RecentKeep, 1, maxSettingCount),
	)
	if err != nil {
		return nil, err
	}
	if p.Interval != nil {
		s := strings.TrimSpace(*p.Interval)
		d, err := time.ParseDuration(s)
		if err != nil {
			return nil, fmt.Errorf("reflector.interval %q: want a duration such as 30m or 1h", *p.Interval)
		}
		if d < minInterval || d > maxInterval {
			return nil, fmt.Errorf("reflector.interval %s: want %s to %s", d, minInterval, maxInterval)
		}
		out = append(out, tomledit.Setting{Key: "interval", Value: strconv.Quote(s)})
	}
	if err := errors.Join(
		intIn("retention", p.Retention, 1, 10000),
		intIn("word_budget", p.WordBudget, 10, 100000),
	); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("nothing to change: give at least one reflector setting")
	}
	return out, nil
}

// UpdateSettings writes r's keys into config.toml (under the file's lock,
// atomically, every other byte kept), reloads the live configuration and
// returns the settings then in force, with a warning for each saved key
// an environment variable overrides. A config.toml the edit cannot handle
// safely is refused (ErrConflict) and left as it is.
func (a *App) UpdateSettings(ctx context.Context, r SettingsRequest) (SettingsResult, error) {
	sets, managerSets, err := r.assignments()
	if err != nil {
		return SettingsResult{}, err
	}
	path := a.home.ConfigPath()
	if len(sets) > 0 {
		if err := updateConfigTable(ctx, path, "reflector", sets); err != nil {
			return SettingsResult{}, err
		}
	}
	if len(managerSets) > 0 {
		if err := updateConfigTable(ctx, path, "manager", managerSets); err != nil {
			return SettingsResult{}, err
		}
	}
	// A running manager sees the file change too, and acts on what
	// changed (mining switched on: a scan).
	if _, err := a.ReloadSettings(); err != nil {
		a.log.Warn("settings: saved settings do not load", "err", err) // shown as config_error
	}
	a.log.Info("settings saved", "path", path, "keys", len(sets)+len(managerSets))
	resp := a.ReadSettings()
	env := map[string]bool{}
	for _, k := range resp.EnvOverrides {
		env[k] = true
	}
	for _, s := range sets {
		if k := "HIVEMEM_REFLECTOR_" + strings.ToUpper(s.Key); env[k] {
			resp.Warnings = append(resp.Warnings, fmt.Sprintf("%s is set in the environment and overrides the saved reflector.%s", k, s.Key))
		}
	}
	if len(managerSets) > 0 && env["HIVEMEM_MANAGER_MINING"] {
		resp.Warnings = append(resp.Warnings, "HIVEMEM_MANAGER_MINING is set in the environment and overrides the saved manager.mining")
	}
	return resp, nil
}

// updateConfigTable writes sets into config.toml's table under the file's
// lock, atomically. Everything else in the file (other tables, comments,
// key order) is kept byte for byte; the result is parsed and checked
// (tomledit's checks, then config's) before it replaces the file, so a
// file this edit cannot handle is refused (ErrConflict) rather than
// damaged.
func updateConfigTable(ctx context.Context, path, table string, sets []tomledit.Setting) error {
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err := atomicio.Update(lctx, path, 0o600, func(old []byte) ([]byte, error) {
		out, err := tomledit.Set(old, table, sets)
		if pe := (*tomledit.ParseError)(nil); errors.As(err, &pe) {
			return nil, conflict("config.toml does not parse, fix it by hand first: %w", pe.Err)
		}
		if err == nil {
			_, err = config.Parse(out)
		}
		if err != nil {
			return nil, conflict("cannot update config.toml safely (%w); edit [%s] by hand", err, table)
		}
		return out, nil
	})
	if err != nil {
		var ke kindError
		if errors.As(err, &ke) {
			return ke
		}
		return fmt.Errorf("save settings: %w", err)
	}
	return nil
}
