package mock

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/wire"
)

// BenchmarkServeOK measures the mock's serve path: one OpenAI success
// stream (41 SSE events, about 11 KB) per op, one client after another,
// through the proxy (--proxy always; the path of every scenario before
// Env.Path) and straight to the mock (the path of a scenario whose faults
// need no proxy, as this one's: ok), over a
// fresh connection per stream and over one kept-alive connection. Each op
// reads the whole response; the Env journals nothing (Journal nil) and
// keeps a bounded record (KeepAttempts), as a long chaos serve does. Its
// figures are in docs/performance.md:
//
//	go test ./chaos/mock -run '^$' -bench ServeOK -count 5
func BenchmarkServeOK(b *testing.B) {
	ctx := b.Context()
	toxi, err := StartToxiproxy(ctx, "")
	if err != nil {
		b.Fatal(err)
	}
	defer toxi.Close()
	env, err := StartEnv(ctx, EnvConfig{Toxi: toxi, RunID: "bench", KeepAttempts: 1000, QuietAttempts: true, Proxy: ProxyAlways,
		Scenario: &scenario.Scenario{Name: "bench", Provider: wire.ProviderOpenAI}})
	if err != nil {
		b.Fatal(err)
	}
	defer env.Close()
	proxy, _ := url.Parse(env.BaseURL())
	direct, _ := url.Parse(env.mockURL)
	body := `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	for _, path := range []struct{ name, addr string }{{"proxy", proxy.Host}, {"direct", direct.Host}} {
		for _, keep := range []bool{false, true} {
			conn := "close"
			if keep {
				conn = "keep-alive"
			}
			req := []byte("POST " + wire.PathOpenAI + " HTTP/1.1\r\nHost: " + path.addr + "\r\nConnection: " + conn +
				"\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
			b.Run(fmt.Sprintf("%s/%s", path.name, map[bool]string{false: "fresh", true: "keepalive"}[keep]), func(b *testing.B) {
				var c net.Conn
				var br *bufio.Reader
				defer func() {
					if c != nil {
						c.Close()
					}
				}()
				var n int64
				for b.Loop() {
					if c == nil {
						if c, err = net.Dial("tcp", path.addr); err != nil {
							b.Fatal(err)
						}
						br = bufio.NewReader(c)
					}
					if _, err := c.Write(req); err != nil {
						b.Fatal(err)
					}
					resp, err := http.ReadResponse(br, nil)
					if err != nil {
						b.Fatal(err)
					}
					k, err := io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if err != nil || resp.StatusCode != 200 {
						b.Fatalf("status %d, %d bytes: %v", resp.StatusCode, k, err)
					}
					n = k
					if !keep || resp.Close {
						c.Close()
						c = nil
					}
				}
				b.SetBytes(n)
			})
		}
	}
}
