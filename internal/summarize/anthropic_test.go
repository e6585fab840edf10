package summarize

import (
	"encoding/json"
	"testing"
)

// messagesReply builds a Messages API success body carrying text.
func messagesReply(text, stop string) string {
	b, _ := json.Marshal(map[string]any{
		"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
		"content":     []map[string]any{{"type": "text", "text": text}},
		"stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]int{"input_tokens": 812, "output_tokens": 64},
	})
	return string(b)
}

func anthropicError(typ, msg string) string {
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}})
	return string(b)
}

func TestAnthropic(t *testing.T) {
	ok := reply{status: 200, body: messagesReply(goodReply, "end_turn")}
	tests := []apiCase{
		{name: "success", replies: []reply{ok}, wantCalls: 1},
		{name: "fenced reply", replies: []reply{{status: 200, body: messagesReply("```json\n"+goodReply+"\n```", "end_turn")}}, wantCalls: 1},
		{name: "overloaded then ok", replies: []reply{{status: 529, body: anthropicError("overloaded_error", "Overloaded")}, ok}, wantCalls: 2},
		{name: "rate limited then ok", replies: []reply{{status: 429, header: map[string]string{"Retry-After": "0"}, body: anthropicError("rate_limit_error", "slow down")}, ok}, wantCalls: 2},
		{name: "server errors exhaust retries", replies: []reply{{status: 500, body: anthropicError("api_error", "Internal server error")}},
			wantCalls: defaultAttempts, wantErr: "HTTP 500: api_error: Internal server error", status: 500},
		{name: "bad request not retried", replies: []reply{{status: 400, body: anthropicError("invalid_request_error", "max_tokens: must be positive")}},
			wantCalls: 1, wantErr: "invalid_request_error: max_tokens: must be positive", status: 400},
		{name: "auth error", replies: []reply{{status: 401, body: anthropicError("authentication_error", "invalid x-api-key")}},
			wantCalls: 1, wantErr: "invalid x-api-key", status: 401},
		{name: "error body not JSON", replies: []reply{{status: 403, header: map[string]string{"Content-Type": "text/html"}, body: "<html>Forbidden by proxy</html>"}},
			wantCalls: 1, wantErr: "HTTP 403: <html>Forbidden by proxy</html>", status: 403},
		{name: "reply not JSON", replies: []reply{{status: 200, header: map[string]string{"Content-Type": "text/html"}, body: "<html>captive portal</html>"}},
			wantCalls: 1, wantErr: "not a Messages API response"},
		{name: "model text not JSON", replies: []reply{{status: 200, body: messagesReply("I summarised it for you.", "end_turn")}},
			wantCalls: 1, wantErr: "reply did not parse"},
		{name: "cut off at max_tokens", replies: []reply{{status: 200, body: messagesReply(`{"condensed": "- 2026-11-29 Bob fix`, "max_tokens")}},
			wantCalls: 1, wantErr: "cut off at max_tokens"},
		{name: "contract violated", replies: []reply{{status: 200, body: messagesReply(`{"condensed":"x"}`, "end_turn")}},
			wantCalls: 1, wantErr: `"hoist" is missing`},
	}
	runAPICases(t, tests, func(url string) Config {
		return Config{Provider: ProviderAnthropic, APIKey: "sk-test", BaseURL: url + "/", Model: "claude-haiku-4-5", MaxTokens: 2000}
	}, checkAnthropicRequest)
}

// checkAnthropicRequest holds a request to the Messages API wire format.
func checkAnthropicRequest(t *testing.T, r seen) {
	t.Helper()
	if r.method != "POST" || r.path != "/v1/messages" {
		t.Errorf("request = %s %s, want POST /v1/messages", r.method, r.path)
	}
	for k, want := range map[string]string{"X-Api-Key": "sk-test", "Anthropic-Version": "2023-06-01", "Content-Type": "application/json"} {
		if got := r.header.Get(k); got != want {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}
	if r.header.Get("Authorization") != "" {
		t.Error("Anthropic request carries an Authorization header")
	}
	body := decodeJSON(t, r.body)
	if body["model"] != "claude-haiku-4-5" || body["max_tokens"] != float64(2000) || body["system"] != systemPrompt {
		t.Errorf("body model/max_tokens/system = %v %v %q", body["model"], body["max_tokens"], body["system"])
	}
	msgs, _ := body["messages"].([]any)
	if len(msgs) != 1 {
		t.Fatalf("messages = %v, want one user message", body["messages"])
	}
	m, _ := msgs[0].(map[string]any)
	if m["role"] != "user" || m["content"] != Prompt(apiReq) {
		t.Errorf("message = role %v, content %.80q…, want the prompt as the user turn", m["role"], m["content"])
	}
	for k := range body {
		switch k {
		case "model", "max_tokens", "system", "messages":
		default:
			t.Errorf("unexpected body key %q", k)
		}
	}
}
