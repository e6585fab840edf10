package summarize

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
)

// openAIAPI calls any OpenAI-compatible chat completions endpoint (OpenAI,
// Ollama, llama.cpp, vLLM, ...) at temperature 0.
type openAIAPI struct {
	httpAPI
	endpoint  string
	apiKey    string
	model     string
	maxTokens int
}

func (o *openAIAPI) Name() string { return ProviderOpenAI }

// chatCompletionsURL accepts a base URL with or without the /v1 suffix, as
// users copy either form from their server's documentation.
func chatCompletionsURL(base string) string {
	base = strings.TrimRight(base, "/")
	if strings.HasSuffix(base, "/v1") {
		return base + "/chat/completions"
	}
	return base + "/v1/chat/completions"
}

type openAIRequest struct {
	Model       string          `json:"model"`
	Messages    []openAIMessage `json:"messages"`
	Temperature float64         `json:"temperature"`
	MaxTokens   int             `json:"max_tokens,omitempty"`
}

type openAIMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type openAIResponse struct {
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
}

// openAIErrorMessage reads {"error":{"message":..}} and the plain
// {"error":"..."} some compatible servers send.
func openAIErrorMessage(body []byte) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || len(e.Error) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(e.Error, &s) == nil {
		return s
	}
	var obj struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(e.Error, &obj) == nil {
		return obj.Message
	}
	return ""
}

// Summarize implements Summarizer.
func (o *openAIAPI) Summarize(ctx context.Context, req Request) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, failure(ProviderOpenAI, err, "canceled: %v", err)
	}
	header := http.Header{}
	if o.apiKey != "" {
		header.Set("Authorization", "Bearer "+o.apiKey)
	}
	body := openAIRequest{
		Model: o.model,
		Messages: []openAIMessage{
			{Role: "system", Content: systemPrompt},
			{Role: "user", Content: Prompt(req)},
		},
		Temperature: 0,
		MaxTokens:   o.maxTokens,
	}
	data, err := o.post(ctx, o.endpoint, header, body, openAIErrorMessage)
	if err != nil {
		return Result{}, err
	}
	var resp openAIResponse
	if err := json.Unmarshal(data, &resp); err != nil {
		return Result{}, failure(ProviderOpenAI, err, "reply is not a chat completion: %v (starts %q)", err, snippet(string(data), 80))
	}
	if len(resp.Choices) == 0 || resp.Choices[0].Message.Content == nil {
		if msg := openAIErrorMessage(data); msg != "" {
			return Result{}, failure(ProviderOpenAI, nil, "%s", msg)
		}
		return Result{}, failure(ProviderOpenAI, nil, "reply has no choices[0].message.content")
	}
	res, err := Parse(*resp.Choices[0].Message.Content)
	if err != nil {
		e := failure(ProviderOpenAI, err, "reply did not parse: %v", err)
		if resp.Choices[0].FinishReason == "length" {
			e.Message += " (the reply was cut off by the token limit; raise MaxTokens)"
		}
		return Result{}, e
	}
	return dropPinned(req, res), nil
}
