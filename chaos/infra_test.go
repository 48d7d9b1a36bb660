package chaos

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/chaos/scenario"
)

// TestRunProxyServerErrorsAreRunErrors: a toxiproxy server whose API
// answers 500 to every proxy creation made every scenario FAIL, as if the
// client were wrong. Each scenario is now an "error" of the run, none a
// failure, and the run stops at the first (the others are not started, or
// stopped).
func TestRunProxyServerErrorsAreRunErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/version":
			w.Write([]byte(`{"version": "2.12.0"}`))
		case r.URL.Path == "/proxies" && r.Method == http.MethodGet:
			w.Write([]byte(`{}`))
		default:
			http.Error(w, `{"error": "internal error", "status": 500}`, http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	toxi, err := mock.StartToxiproxy(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer toxi.Close()
	var scs []*scenario.Scenario
	for _, name := range []string{"a", "b", "c", "d"} {
		scs = append(scs, parse(t, name, "attempts: []\nexpect: {outcome: success, attempts: 1}\n"))
	}
	// --proxy always: the scenarios need no proxy of their own.
	r := &Runner{Toxi: toxi, ToxiName: srv.URL, Out: t.TempDir(), Parallel: 2, Seed: 1, Proxy: mock.ProxyAlways}
	sum, err := r.Run(context.Background(), scs)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Errors != 4 || sum.Failed != 0 || sum.Passed != 0 || sum.Interrupted != 0 {
		t.Fatalf("errors %d failed %d passed %d interrupted %d, want 4, 0, 0, 0", sum.Errors, sum.Failed, sum.Passed, sum.Interrupted)
	}
	causes := 0
	for _, res := range sum.Scenarios {
		if res.Verdict != VerdictError || !strings.Contains(res.Error, "500") {
			t.Errorf("%s = %s (%s), want error naming the 500", res.Name, res.Verdict, res.Error)
		}
		if strings.HasPrefix(res.Error, "start mock and proxy: ") {
			causes++
		}
	}
	if causes == 0 {
		t.Errorf("no scenario names the proxy creation as the cause: %+v", sum.Scenarios)
	}
}
