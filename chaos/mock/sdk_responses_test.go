package mock

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/chaos/redact"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/wire"
)

// TestSDKResponses runs the official OpenAI Node SDK's Responses API
// (testdata/sdk/node/responses.mjs: responses.stream(...).finalResponse(),
// or responses.create without a stream) against the mock's
// openai-responses format: the SDK's output_text is the scenario's ok.text
// and equals the streamed deltas; an SSE error is response.failed; a cut
// stream is an error; a 503 is retried by the SDK's own loop.
const sdkInstallHint = "install the SDK clients from the repository root: npm ci --prefix testdata/sdk/node && go -C testdata/sdk/go build -o bin/ ./..."

func TestSDKResponses(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skipf("node is not installed; %s", sdkInstallHint)
	}
	if _, err := os.Stat("../../testdata/sdk/node/node_modules/openai/lib/responses"); err != nil {
		t.Skipf("the openai Node SDK (with responses) is not installed; %s", sdkInstallHint)
	}
	const text = "Four score and seven years ago, a client retried with backoff."
	ok := scenario.Fault{Kind: fault.OK{Text: text}}
	five := 5
	toxi := startToxi(t)
	for _, tc := range []struct {
		name, mode string
		faults     []scenario.Fault
		exit       int
		attempts   int
		out        string // in stdout (exit 0) or stderr
	}{
		{"stream ok.text", "stream", []scenario.Fault{ok}, 0, 1, strconv.Quote(text)},
		{"create ok.text", "create", []scenario.Fault{ok}, 0, 1, strconv.Quote(text)},
		{"503 retried", "stream", []scenario.Fault{{Kind: fault.Status{Status: 503}}, ok}, 0, 2, strconv.Quote(text)},
		{"response.failed", "stream", []scenario.Fault{{Kind: fault.SSEError{AfterEvents: 5, Type: "server_error", Message: "boom"}}}, 1, 1, "response failed: server_error: boom"},
		{"drop after events", "stream", []scenario.Fault{{Kind: fault.Drop{AfterEvents: &five}}}, 1, 1, "failed"},
		{"create 400", "create", []scenario.Fault{{Kind: fault.Status{Status: 400}}}, 1, 1, "400"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startEnv(t, toxi, wire.ProviderResponses, tc.faults...)
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, "node", "../../testdata/sdk/node/responses.mjs", tc.mode)
			cmd.Env = append(os.Environ(), "OPENAI_BASE_URL="+e.BaseURL()+"/v1", "OPENAI_API_KEY="+redact.FakeAPIKey)
			var stdout, stderr syncBuffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			exit := 0
			if ee, isExit := err.(*exec.ExitError); isExit {
				exit = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			out := stdout.String() + stderr.String()
			if exit != tc.exit || !strings.Contains(out, tc.out) {
				t.Errorf("exit %d, want %d with %q in the output:\n%s", exit, tc.exit, tc.out, out)
			}
			waitAttempts(t, e, tc.attempts)
			if as := e.Attempts(); len(as) != tc.attempts {
				t.Errorf("%d attempts, want %d: %+v", len(as), tc.attempts, as)
			}
		})
	}
}
