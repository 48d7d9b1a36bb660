package redact

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestRequestSecretsEveryPlace is the regression test for keys a client
// sent as a query parameter or a JSON body field, which were never learnt
// (and so left in every run file): each place a key can be sent.
func TestRequestSecretsEveryPlace(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		url    string
		header map[string]string
		body   string
		want   []string
	}{
		{name: "x-api-key", url: "/v1/messages", header: map[string]string{"X-Api-Key": " hdr-key-1 "}, want: []string{"hdr-key-1"}},
		{name: "bearer", url: "/", header: map[string]string{"Authorization": "Bearer tok-abc-123"}, want: []string{"tok-abc-123"}},
		{name: "basic", url: "/", header: map[string]string{"Authorization": "Basic dXNlcjpwYXNzd29yZC0x"}, want: []string{"dXNlcjpwYXNzd29yZC0x", "user:password-1", "password-1"}},
		{name: "goog header", url: "/", header: map[string]string{"X-Goog-Api-Key": "goog-key-1"}, want: []string{"goog-key-1"}},
		{name: "query", url: "/v1/messages?key=q-key-1&api_key=q-key-2&access_token=q-tok-3&token=q-tok-4&model=m&max_tokens=100", want: []string{"q-key-1", "q-key-2", "q-tok-3", "q-tok-4"}},
		{name: "query encoded", url: "/?apiKey=a%2Fb%2Bc-12", want: []string{"a/b+c-12"}},
		{name: "gemini query and header", url: "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse&key=gq-key-1",
			header: map[string]string{"x-goog-api-key": "gh-key-2"}, body: `{"contents":[{"parts":[{"text":"hi"}]}]}`, want: []string{"gh-key-2", "gq-key-1"}},
		{name: "json", url: "/", body: `{"model":"m","api_key":"j-key-1","max_tokens":5,"auth":{"apiKey":"j-key-2","nested":[{"access_token":"j-tok-3"}]},"token":["j-tok-4",{"x":"j-tok-5"}],"secret":7,"password":"j-pw-6","x-api-key":"j-key-7"}`,
			want: []string{"j-key-1", "j-key-2", "j-tok-3", "j-tok-4", "j-tok-5", "j-pw-6", "j-key-7"}},
		{name: "json escaped name", url: "/", body: `{"api\u005fkey":"j-key-8"}`, want: []string{"j-key-8"}},
		{name: "json malformed", url: "/", body: `{"token":"j-tok-9", "x": }`, want: []string{"j-tok-9"}},
		{name: "form", url: "/", header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, body: "client_secret=f-sec-1&model=m", want: []string{"f-sec-1"}},
		{name: "not keys", url: "/?model=abc&tokens=12345678", body: `{"max_tokens":100,"messages":[{"role":"user","content":"my token is"}],"idempotency_key":"idem-12345"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest("POST", "http://mock"+tc.url, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			got := RequestSecrets(req, []byte(tc.body))
			slices.Sort(got)
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

func FuzzJSONSecrets(f *testing.F) {
	f.Add(`{"a":{"token":["x",{"k":"v"}]},"b":[1,2,{"api_key":"y"}]}`)
	f.Fuzz(func(t *testing.T, s string) {
		jsonSecrets([]byte(s), func(string) {}) // must not panic
	})
}
