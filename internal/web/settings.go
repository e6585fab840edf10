package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
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
		SectionTrigger: r.SectionTrigger, RecentKeep: r.RecentKeep, Interval: duration(r.Interval.Duration),
		Retention: r.Retention, WordBudget: r.WordBudget,
	}
}

// ManagerSettings are the [manager] settings the dashboard changes.
type ManagerSettings struct {
	// Mining is manager.mining: false stops mining and condensing (search
	// and wake-up still answer).
	Mining bool `json:"mining"`
}

// SettingsResponse is GET /api/v1/settings. Secrets (API keys, the token)
// are never included.
type SettingsResponse struct {
	ConfigPath string            `json:"config_path"`
	Reflector  ReflectorSettings `json:"reflector"`
	Manager    ManagerSettings   `json:"manager"`
	// EnvOverrides lists the HIVEMEM_REFLECTOR_* variables (and
	// HIVEMEM_MANAGER_MINING) that are set:
	// they win over config.toml, so saving those keys here has no effect.
	EnvOverrides []string       `json:"env_overrides"`
	Summarizer   map[string]any `json:"summarizer"`
	Search       map[string]any `json:"search"`
	Editable     bool           `json:"editable"` // PATCH is possible (settings are read from config.toml)
	ConfigError  string         `json:"config_error,omitempty"`
	Warnings     []string       `json:"warnings,omitempty"`
}

func (h *Handler) settings() SettingsResponse {
	cfg, cerr := h.cfg(), h.live.ConfigError()
	resp := SettingsResponse{
		ConfigPath: h.app.Home.ConfigPath(), Reflector: reflectorSettings(cfg.Reflector),
		Manager:      ManagerSettings{Mining: cfg.Manager.Mining},
		EnvOverrides: reflectorEnvOverrides(),
		Summarizer:   map[string]any{"provider": cfg.Summarizer.Provider, "model": cfg.Summarizer.Model, "timeout": duration(cfg.Summarizer.Timeout.Duration)},
		Search: map[string]any{
			"mode": h.app.Palace.Mode(), "results": cfg.Search.Results, "wake_up_budget": cfg.Search.WakeUpBudget,
			"fusion": cfg.Search.Fusion, "vector_weight": cfg.Search.VectorWeight,
		},
		Editable: true,
	}
	if cerr != nil {
		resp.ConfigError = cerr.Error()
	}
	return resp
}

// reflectorEnvOverrides lists the set environment variables that override
// [reflector] keys.
func reflectorEnvOverrides() []string {
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

func (h *Handler) apiSettings(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, h.settings())
	return nil
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

// settingsPatch is the body of PATCH /api/v1/settings.
type settingsPatch struct {
	Reflector *ReflectorPatch `json:"reflector"`
	Manager   *ManagerPatch   `json:"manager"`
}

// settings limits beyond config.Validate's: values that would make the
// reflector spin, never trigger, or keep absurd amounts.
const (
	maxSettingBytes = 1 << 30
	maxSettingCount = 1_000_000
	minInterval     = time.Second
	maxInterval     = 30 * 24 * time.Hour
)

// validate checks each given value and returns them as TOML assignments
// in a fixed order.
func (p *ReflectorPatch) validate() ([]tomledit.Setting, error) {
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

func (h *Handler) apiUpdateSettings(w http.ResponseWriter, r *http.Request) error {
	var p settingsPatch
	if err := decodeJSON(w, r, &p, false); err != nil {
		return err
	}
	if p.Reflector == nil && (p.Manager == nil || p.Manager.Mining == nil) {
		return errBadRequest(`nothing to change: want {"reflector": {...}} or {"manager": {"mining": true|false}}`)
	}
	var sets, managerSets []tomledit.Setting
	if p.Reflector != nil {
		var err error
		if sets, err = p.Reflector.validate(); err != nil {
			return statusError(http.StatusBadRequest, err)
		}
	}
	if p.Manager != nil && p.Manager.Mining != nil {
		managerSets = []tomledit.Setting{{Key: "mining", Value: strconv.FormatBool(*p.Manager.Mining)}}
	}
	path := h.app.Home.ConfigPath()
	if len(sets) > 0 {
		if err := updateReflectorConfig(r.Context(), path, sets); err != nil {
			return err
		}
	}
	if len(managerSets) > 0 {
		if err := updateTableConfig(r.Context(), path, "manager", managerSets); err != nil {
			return err
		}
	}
	if err := h.live.ReloadConfig(); err != nil {
		h.log.Warn("web: saved settings do not load", "err", err) // shown as config_error
	}
	h.log.Info("web: reflector settings saved", "path", path, "keys", len(sets))
	resp := h.settings()
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
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// updateReflectorConfig writes sets into config.toml's [reflector] table
// under the file's lock, atomically. Everything else in the file (other
// tables, comments, key order) is kept byte for byte; the result is parsed
// and checked (tomledit's checks, then config's) before it replaces the
// file, so a file this edit cannot handle is refused (409) rather than
// damaged.
func updateReflectorConfig(ctx context.Context, path string, sets []tomledit.Setting) error {
	return updateTableConfig(ctx, path, "reflector", sets)
}

// updateTableConfig is updateReflectorConfig for any one table.
func updateTableConfig(ctx context.Context, path, table string, sets []tomledit.Setting) error {
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err := atomicio.Update(lctx, path, 0o600, func(old []byte) ([]byte, error) {
		out, err := tomledit.Set(old, table, sets)
		if pe := (*tomledit.ParseError)(nil); errors.As(err, &pe) {
			return nil, statusError(http.StatusConflict, fmt.Errorf("config.toml does not parse, fix it by hand first: %w", pe.Err))
		}
		if err == nil {
			_, err = config.Parse(out)
		}
		if err != nil {
			return nil, statusError(http.StatusConflict, fmt.Errorf("cannot update config.toml safely (%w); edit [%s] by hand", err, table))
		}
		return out, nil
	})
	if err != nil {
		var he *httpError
		if errors.As(err, &he) {
			return he
		}
		return fmt.Errorf("save settings: %w", err)
	}
	return nil
}
