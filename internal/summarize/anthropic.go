package summarize

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
)

// anthropicAPI calls the Anthropic Messages API (POST /v1/messages) with the
// prompt as the single user turn and no tools.
type anthropicAPI struct {
	httpAPI
	baseURL   string
	apiKey    string
	model     string
	maxTokens int
}

func (a *anthropicAPI) Name() string { return ProviderAnthropic }

type anthropicRequest struct {
	Model     string             `json:"model"`
	MaxTokens int                `json:"max_tokens"`
	System    string             `json:"system,omitempty"`
	Messages  []anthropicMessage `json:"messages"`
}

type anthropicMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type anthropicResponse struct {
	Type    string `json:"type"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StopReason string `json:"stop_reason"`
}

// anthropicErrorMessage reads {"type":"error","error":{"type":..,"message":..}}.
func anthropicErrorMessage(body []byte) string {
	var e struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error.Message == "" {
		return ""
	}
	if e.Error.Type != "" {
		return e.Error.Type + ": " + e.Error.Message
	}
	return e.Error.Message
}

// Summarize implements Summarizer.
func (a *anthropicAPI) Summarize(ctx context.Context, req Request) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, failure(ProviderAnthropic, err, "canceled: %v", err)
	}
	header := http.Header{}
	header.Set("x-api-key", a.apiKey)
	header.Set("anthropic-version", anthropicVersionHeader)
	body := anthropicRequest{
		Model:     a.model,
		MaxTokens: a.maxTokens,
		System:    systemPrompt,
		Messages:  []anthropicMessage{{Role: "user", Content: Prompt(req)}},
	}
	data, err := a.post(ctx, a.baseURL+"/v1/messages", header, body, anthropicErrorMessage)
	if err != nil {
		return Result{}, err
	}
	var resp anthropicResponse
	if err := json.Unmarshal(data, &resp); err != nil {
		return Result{}, failure(ProviderAnthropic, err, "reply is not a Messages API response: %v (starts %q)", err, snippet(string(data), 80))
	}
	var text strings.Builder
	for _, block := range resp.Content {
		if block.Type == "text" {
			text.WriteString(block.Text)
		}
	}
	res, err := Parse(text.String())
	if err != nil {
		e := failure(ProviderAnthropic, err, "reply did not parse: %v", err)
		if resp.StopReason == "max_tokens" {
			e.Message += " (the reply was cut off at max_tokens; raise MaxTokens)"
		}
		return Result{}, e
	}
	return dropPinned(req, res), nil
}
