package provider

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestStreamRealWireDetails streams event sequences shaped like the real
// APIs' (as the official SDKs parse them) through the built-in clients:
// thinking, signature, tool_use and citation deltas are not text and must not
// break the stream; the usage comes from wherever the API puts it.
func TestStreamRealWireDetails(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		provider string
		chunks   []string
		want     *Response
		deltas   []string
	}{
		{
			name:     "anthropic extended thinking then text",
			provider: "anthropic",
			chunks: []string{
				"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-sonnet-4-5\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":40,\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":0,\"output_tokens\":3,\"service_tier\":\"standard\"}}}\n\n",
				"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}\n\n",
				"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"Let me think.\"}}\n\n",
				"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"EqQBCgIYAhIM\"}}\n\n",
				"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
				"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
				"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"42\"}}\n\n",
				"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"citations_delta\",\"citation\":{\"type\":\"char_location\",\"cited_text\":\"x\"}}}\n\n",
				"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
				"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"input_tokens\":40,\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":0,\"output_tokens\":57}}\n\n",
				"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
			},
			want:   &Response{Text: "42", StopReason: "end_turn", RequestID: "req_123", Model: "claude-sonnet-4-5", Usage: Usage{40, 57}},
			deltas: []string{"42"},
		},
		{
			name:     "anthropic tool_use only",
			provider: "anthropic",
			chunks: []string{
				"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_2\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-haiku-4-5\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":300,\"output_tokens\":1}}}\n\n",
				"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"get_weather\",\"input\":{}}}\n\n",
				"event: ping\ndata: {\"type\": \"ping\"}\n\n",
				"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\"}}\n\n",
				"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"location\\\": \\\"Paris\\\"}\"}}\n\n",
				"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
				"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":89}}\n\n",
				"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
			},
			want: &Response{StopReason: "tool_use", RequestID: "req_123", Model: "claude-haiku-4-5", Usage: Usage{300, 89}},
		},
		{
			name:     "openai include_usage: usage null on every chunk, then a usage-only chunk",
			provider: "openai",
			chunks: []string{
				"data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-mini-2024-07-18\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\",\"refusal\":null},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null,\"obfuscation\":\"ab\"}\n\n",
				"data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-mini-2024-07-18\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n",
				"data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-mini-2024-07-18\",\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":null,\"finish_reason\":\"stop\"}],\"usage\":null}\n\n",
				"data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-mini-2024-07-18\",\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":2,\"total_tokens\":11,\"prompt_tokens_details\":{\"cached_tokens\":0,\"audio_tokens\":0},\"completion_tokens_details\":{\"reasoning_tokens\":0,\"audio_tokens\":0,\"accepted_prediction_tokens\":0,\"rejected_prediction_tokens\":0}}}\n\n",
				"data: [DONE]\n\n",
			},
			want:   &Response{Text: "Hi", StopReason: "stop", RequestID: "req_123", Model: "gpt-4o-mini-2024-07-18", Usage: Usage{9, 2}},
			deltas: []string{"Hi"},
		},
		{
			name:     "openai tool_calls with content null",
			provider: "openai",
			chunks: []string{
				"data: {\"id\":\"chatcmpl-2\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"\"}}],\"refusal\":null},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n",
				"data: {\"id\":\"chatcmpl-2\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"location\\\":\\\"Paris\\\"}\"}}]},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n",
				"data: {\"id\":\"chatcmpl-2\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":null,\"finish_reason\":\"tool_calls\"}],\"usage\":null}\n\n",
				"data: {\"id\":\"chatcmpl-2\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"choices\":[],\"usage\":{\"prompt_tokens\":50,\"completion_tokens\":17,\"total_tokens\":67}}\n\n",
				"data: [DONE]\n\n",
			},
			want: &Response{StopReason: "tool_calls", RequestID: "req_123", Model: "gpt-4o", Usage: Usage{50, 17}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, stream(tt.chunks...))
			var deltas []string
			c, err := New(tt.provider, Config{BaseURL: srv.URL + "/", APIKey: testKey, OnText: func(s string) { deltas = append(deltas, s) }})
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Stream(context.Background(), testReq)
			if err != nil {
				t.Fatalf("Stream() error: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Stream() mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.deltas, deltas); diff != "" {
				t.Errorf("OnText deltas mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCutStreamIsIncomplete: a stream cut mid-chunk is an incomplete attempt
// whatever the Connection header says (Node's fetch takes EOF on a
// Connection: close response for a clean end; this client must not), and a
// stream without framing whose connection ends before message_stop / [DONE]
// is incomplete too.
func TestCutStreamIsIncomplete(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, provider, head, body string
		chunked                    bool
	}{
		{"anthropic cut, Connection: close", "anthropic", "Connection: close\r\n", anthropicOK[0] + anthropicOK[3], true},
		{"anthropic cut, keep-alive", "anthropic", "Connection: keep-alive\r\n", anthropicOK[0] + anthropicOK[3], true},
		{"openai cut, Connection: close", "openai", "Connection: close\r\n", openaiOK[0] + openaiOK[1], true},
		{"anthropic no framing, connection ends before message_stop", "anthropic", "Connection: close\r\n", anthropicOK[0] + anthropicOK[3], false},
		{"openai no framing, connection ends before [DONE]", "openai", "Connection: close\r\n", openaiOK[0] + openaiOK[1], false},
		{"responses cut, Connection: close", ResponsesProvider, "Connection: close\r\n", responsesOK[0] + responsesOK[4], true},
		{"responses no framing, connection ends before response.completed", ResponsesProvider, "Connection: close\r\n", responsesOK[0] + responsesOK[4], false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n" + tc.head
			if tc.chunked {
				// One chunk, no last-chunk marker: the connection just ends.
				raw += "Transfer-Encoding: chunked\r\n\r\n" + fmt.Sprintf("%x\r\n%s\r\n", len(tc.body), tc.body)
			} else {
				raw += "\r\n" + tc.body
			}
			srv := newServer(t, hijack(raw))
			c, err := New(tc.provider, Config{BaseURL: srv.URL, APIKey: testKey})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Stream(context.Background(), testReq)
			var e *Error
			if !errors.As(err, &e) || e.Kind != KindIncomplete {
				t.Fatalf("Stream() error = %v, want KindIncomplete", err)
			}
		})
	}
}
