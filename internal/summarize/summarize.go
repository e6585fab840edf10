// Package summarize turns the oldest part of an agent's memory into a bounded
// rolling summary for the reflector. A Summarizer receives the current
// condensed history, the evicted sections and the pinned facts, and returns
// the new condensed text plus durable facts worth pinning ("hoist").
//
// Four providers share one strict output contract (see Parse): a built-in
// extractive summariser that needs no network (the default), the claude CLI
// run headless with no tools, the Anthropic Messages API, and any
// OpenAI-compatible chat endpoint. Every failure a Summarizer returns is an
// *Error, so the reflector can log one reason and back off uniformly.
package summarize

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Provider names accepted by Config.Provider.
const (
	ProviderExtractive = "extractive"
	ProviderClaudeCLI  = "claude-cli"
	ProviderAnthropic  = "anthropic"
	ProviderOpenAI     = "openai"
)

// ReasonFailed is the Reason of every *Error a Summarizer returns; it is the
// reason the reflector records in its condense-abort event.
const ReasonFailed = "summarize-failed"

// Defaults applied by New and by the providers when a setting is zero.
const (
	DefaultWordBudget      = 600
	DefaultTimeout         = 5 * time.Minute
	DefaultCommand         = "claude"
	DefaultAnthropicURL    = "https://api.anthropic.com"
	DefaultAnthropicModel  = "claude-sonnet-4-6"
	DefaultMaxTokens       = 4096
	anthropicVersionHeader = "2023-06-01"
)

// Request is everything a summariser may look at. Pinned is context only: the
// facts are already safe in the pinned block, so they must not come back in
// Result.Hoist.
type Request struct {
	Agent        string
	OldCondensed string   // the current condensed-history text ("" if none)
	Evicted      []string // raw markdown of each evicted section, oldest first (heading line included)
	Pinned       []string // current durable facts (context only: do not repeat them in hoist)
	WordBudget   int      // target max words for condensed; 0 means DefaultWordBudget
}

// budget is the word budget with the default applied.
func (r Request) budget() int {
	if r.WordBudget <= 0 {
		return DefaultWordBudget
	}
	return r.WordBudget
}

// Result is the validated output: Condensed is never empty, and every Hoist
// entry is a single non-empty line.
type Result struct {
	Condensed string
	Hoist     []string
}

// Summarizer condenses a Request. Implementations must honour ctx and return
// only *Error on failure.
type Summarizer interface {
	Summarize(ctx context.Context, req Request) (Result, error)
	Name() string
}

// Error is a summarisation failure. Message is what the provider said (the
// CLI's stderr, the API's error message) or why its reply was rejected, so
// the operator can act on it without digging through logs.
type Error struct {
	Provider string
	Reason   string // always ReasonFailed for errors from this package
	Status   int    // HTTP status for API providers, else 0
	Message  string
	Err      error // underlying cause, if any (e.g. context.DeadlineExceeded)
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("summarize")
	if e.Provider != "" {
		b.WriteString(" (" + e.Provider + ")")
	}
	b.WriteString(": ")
	if e.Status != 0 {
		fmt.Fprintf(&b, "HTTP %d: ", e.Status)
	}
	msg := e.Message
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	if msg == "" {
		msg = e.Reason
	}
	b.WriteString(msg)
	return b.String()
}

// Unwrap exposes the cause so callers can test errors.Is(err, context.Canceled).
func (e *Error) Unwrap() error { return e.Err }

// failure builds the *Error every provider returns.
func failure(provider string, err error, format string, args ...any) *Error {
	return &Error{Provider: provider, Reason: ReasonFailed, Message: fmt.Sprintf(format, args...), Err: err}
}

// Config selects and configures a provider. Zero values take the defaults.
type Config struct {
	Provider  string // "extractive" (default), "claude-cli", "anthropic", "openai"
	Model     string // anthropic: default DefaultAnthropicModel; openai: required; claude-cli: optional
	BaseURL   string // anthropic: default DefaultAnthropicURL; openai: required (with or without /v1)
	APIKey    string // anthropic: required; openai: optional (sent as a Bearer token)
	Command   string // claude CLI path, default "claude"
	Timeout   time.Duration
	MaxTokens int // anthropic: default DefaultMaxTokens; openai: sent only when set
	// Embedder gives the extractive summariser sentence vectors; nil makes
	// it use word overlap. The other providers ignore it.
	Embedder Embedder
}

// New returns the configured Summarizer, or an error naming the missing or
// unknown setting, so a bad config fails at start-up rather than at the first
// condensation hours later.
func New(cfg Config) (Summarizer, error) {
	provider := strings.ToLower(strings.TrimSpace(cfg.Provider))
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if cfg.MaxTokens < 0 {
		return nil, fmt.Errorf("summarize: max tokens must not be negative (got %d)", cfg.MaxTokens)
	}
	switch provider {
	case "", ProviderExtractive:
		return Extractive{Embedder: cfg.Embedder}, nil
	case ProviderClaudeCLI:
		cmd := strings.TrimSpace(cfg.Command)
		if cmd == "" {
			cmd = DefaultCommand
		}
		return &claudeCLI{command: cmd, model: strings.TrimSpace(cfg.Model), timeout: timeout}, nil
	case ProviderAnthropic:
		if strings.TrimSpace(cfg.APIKey) == "" {
			return nil, errors.New("summarize: provider anthropic needs an API key")
		}
		base := strings.TrimSpace(cfg.BaseURL)
		if base == "" {
			base = DefaultAnthropicURL
		}
		if err := checkBaseURL(base); err != nil {
			return nil, err
		}
		model := strings.TrimSpace(cfg.Model)
		if model == "" {
			model = DefaultAnthropicModel
		}
		maxTokens := cfg.MaxTokens
		if maxTokens == 0 {
			maxTokens = DefaultMaxTokens
		}
		return &anthropicAPI{
			httpAPI:   newHTTPAPI(ProviderAnthropic, timeout),
			baseURL:   strings.TrimRight(base, "/"),
			apiKey:    strings.TrimSpace(cfg.APIKey),
			model:     model,
			maxTokens: maxTokens,
		}, nil
	case ProviderOpenAI:
		base := strings.TrimSpace(cfg.BaseURL)
		model := strings.TrimSpace(cfg.Model)
		if base == "" || model == "" {
			return nil, errors.New("summarize: provider openai needs a base URL and a model")
		}
		if err := checkBaseURL(base); err != nil {
			return nil, err
		}
		return &openAIAPI{
			httpAPI:   newHTTPAPI(ProviderOpenAI, timeout),
			endpoint:  chatCompletionsURL(base),
			apiKey:    strings.TrimSpace(cfg.APIKey),
			model:     model,
			maxTokens: cfg.MaxTokens,
		}, nil
	default:
		return nil, fmt.Errorf("summarize: unknown provider %q (want %s, %s, %s or %s)",
			cfg.Provider, ProviderExtractive, ProviderClaudeCLI, ProviderAnthropic, ProviderOpenAI)
	}
}

// Describe names a summariser for status pages: the provider, with its
// model when it has one, and for the extractive one what it measures
// sentences with.
func Describe(s Summarizer) string {
	switch v := s.(type) {
	case Extractive:
		if v.Embedder != nil {
			return ProviderExtractive + " (sentence vectors)"
		}
		return ProviderExtractive + " (word overlap, no model)"
	case *claudeCLI:
		if v.model != "" {
			return ProviderClaudeCLI + " (" + v.model + ")"
		}
		return ProviderClaudeCLI
	case *anthropicAPI:
		return ProviderAnthropic + " (" + v.model + ")"
	case *openAIAPI:
		return ProviderOpenAI + " (" + v.model + ")"
	}
	return s.Name()
}

// dropPinned removes hoisted facts that are already pinned or repeated,
// compared the way the reflector dedups (see normFact): an LLM told not to
// repeat pinned facts sometimes does anyway.
func dropPinned(req Request, res Result) Result {
	have := make(map[string]bool, len(req.Pinned)+len(res.Hoist))
	for _, p := range req.Pinned {
		have[normFact(p)] = true
	}
	hoist := make([]string, 0, len(res.Hoist))
	for _, h := range res.Hoist {
		k := normFact(h)
		if k == "" || have[k] {
			continue
		}
		have[k] = true
		hoist = append(hoist, h)
	}
	res.Hoist = hoist
	return res
}
