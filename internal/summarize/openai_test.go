package summarize

import (
	"context"
	"encoding/json"
	"testing"
)

// completionReply builds a chat completion success body carrying content.
func completionReply(content any, finish string) string {
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1764000000, "model": "llama3.1",
		"choices": []map[string]any{{"index": 0, "message": map[string]any{"role": "assistant", "content": content}, "finish_reason": finish}},
		"usage":   map[string]int{"prompt_tokens": 900, "completion_tokens": 60, "total_tokens": 960},
	})
	return string(b)
}

func TestOpenAI(t *testing.T) {
	ok := reply{status: 200, body: completionReply(goodReply, "stop")}
	tests := []apiCase{
		{name: "success", replies: []reply{ok}, wantCalls: 1},
		{name: "unavailable then ok", replies: []reply{{status: 503, body: `{"error":{"message":"model is loading","type":"server_error"}}`}, ok}, wantCalls: 2},
		{name: "rate limited then ok", replies: []reply{{status: 429, body: `{"error":{"message":"Rate limit reached","type":"requests"}}`}, ok}, wantCalls: 2},
		{name: "server errors exhaust retries", replies: []reply{{status: 502, body: `{"error":{"message":"bad gateway"}}`}},
			wantCalls: defaultAttempts, wantErr: "HTTP 502: bad gateway", status: 502},
		{name: "model not found", replies: []reply{{status: 404, body: `{"error":{"message":"The model 'nope' does not exist","type":"invalid_request_error","code":"model_not_found"}}`}},
			wantCalls: 1, wantErr: "The model 'nope' does not exist", status: 404},
		{name: "plain string error", replies: []reply{{status: 404, body: `{"error":"model \"nope\" not found, try pulling it first"}`}},
			wantCalls: 1, wantErr: `model "nope" not found`, status: 404},
		{name: "reply not JSON", replies: []reply{{status: 200, header: map[string]string{"Content-Type": "text/plain"}, body: "Gateway says hi"}},
			wantCalls: 1, wantErr: "not a chat completion"},
		{name: "no choices", replies: []reply{{status: 200, body: `{"id":"x","choices":[]}`}},
			wantCalls: 1, wantErr: "no choices[0].message.content"},
		{name: "null content", replies: []reply{{status: 200, body: completionReply(nil, "stop")}},
			wantCalls: 1, wantErr: "no choices[0].message.content"},
		{name: "content not JSON", replies: []reply{{status: 200, body: completionReply("Here you go: the summary.", "stop")}},
			wantCalls: 1, wantErr: "reply did not parse"},
		{name: "cut off by length", replies: []reply{{status: 200, body: completionReply(`{"condensed": "- 2026`, "length")}},
			wantCalls: 1, wantErr: "cut off by the token limit"},
	}
	runAPICases(t, tests, func(url string) Config {
		return Config{Provider: ProviderOpenAI, BaseURL: url, Model: "llama3.1", APIKey: "sk-local"}
	}, func(t *testing.T, r seen) {
		checkOpenAIRequest(t, r, "Bearer sk-local", false)
	})
}

// TestOpenAIRequestVariants checks the /v1 handling of the base URL, that no
// Authorization header is sent without a key, and max_tokens only when set.
func TestOpenAIRequestVariants(t *testing.T) {
	tests := []struct {
		name       string
		suffix     string
		key        string
		maxTokens  int
		wantAuth   string
		wantTokens bool
	}{
		{name: "base without v1, no key", suffix: "", key: "", wantAuth: ""},
		{name: "base with v1, key", suffix: "/v1", key: "k", wantAuth: "Bearer k"},
		{name: "base with v1 slash, max tokens", suffix: "/v1/", maxTokens: 1500, wantTokens: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newScriptServer(t, reply{status: 200, body: completionReply(goodReply, "stop")})
			s, err := New(Config{Provider: "openai", BaseURL: srv.URL + tt.suffix, Model: "llama3.1", APIKey: tt.key, MaxTokens: tt.maxTokens})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Summarize(context.Background(), apiReq); err != nil {
				t.Fatal(err)
			}
			got := srv.requests()
			if len(got) != 1 {
				t.Fatalf("server saw %d requests", len(got))
			}
			checkOpenAIRequest(t, got[0], tt.wantAuth, tt.wantTokens)
			if tt.wantTokens {
				if mt := decodeJSON(t, got[0].body)["max_tokens"]; mt != float64(tt.maxTokens) {
					t.Errorf("max_tokens = %v, want %d", mt, tt.maxTokens)
				}
			}
		})
	}
}

// checkOpenAIRequest holds a request to the chat completions wire format.
func checkOpenAIRequest(t *testing.T, r seen, wantAuth string, wantMaxTokens bool) {
	t.Helper()
	if r.method != "POST" || r.path != "/v1/chat/completions" {
		t.Errorf("request = %s %s, want POST /v1/chat/completions", r.method, r.path)
	}
	if got := r.header.Get("Authorization"); got != wantAuth {
		t.Errorf("Authorization = %q, want %q", got, wantAuth)
	}
	if got := r.header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q", got)
	}
	body := decodeJSON(t, r.body)
	if body["model"] != "llama3.1" {
		t.Errorf("model = %v", body["model"])
	}
	if temp, ok := body["temperature"]; !ok || temp != float64(0) {
		t.Errorf("temperature = %v (present %v), want 0", temp, ok)
	}
	if _, ok := body["max_tokens"]; ok != wantMaxTokens {
		t.Errorf("max_tokens present = %v, want %v", ok, wantMaxTokens)
	}
	msgs, _ := body["messages"].([]any)
	if len(msgs) != 2 {
		t.Fatalf("messages = %v, want system + user", body["messages"])
	}
	sys, _ := msgs[0].(map[string]any)
	user, _ := msgs[1].(map[string]any)
	if sys["role"] != "system" || sys["content"] != systemPrompt {
		t.Errorf("system message = %v", sys)
	}
	if user["role"] != "user" || user["content"] != Prompt(apiReq) {
		t.Errorf("user message = role %v, content %.80q…, want the prompt", user["role"], user["content"])
	}
}
