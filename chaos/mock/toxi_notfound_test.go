package mock

import (
	"context"
	"errors"
	"testing"
)

// A proxy or toxic that is not there is told by the API's 404, not by the
// text of its message.
func TestToxiproxyNotFoundByStatus(t *testing.T) {
	t.Parallel()
	tp, err := StartToxiproxy(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer tp.Close()
	if err := tp.deleteProxy("retrylab-no-such-proxy", apiTimeout); err != nil {
		t.Fatalf("deleting a proxy that is not there: %v, want nil", err)
	}
	p, err := tp.createProxy(context.Background(), "notfound", "127.0.0.1:9")
	if err != nil {
		t.Fatal(err)
	}
	err = p.RemoveToxic("no-such-toxic")
	if !isNotFound(err) {
		t.Fatalf("RemoveToxic of a missing toxic: %v, want a 404 ApiError", err)
	}
	if isNotFound(errors.New("proxy not found")) {
		t.Fatal("a plain error that says not found is not the API's 404")
	}
	if isNotFound(nil) {
		t.Fatal("nil is not a 404")
	}
}
