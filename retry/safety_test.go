package retry

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestClassifyOperation(t *testing.T) {
	t.Parallel()
	got := map[string]string{}
	for _, op := range []string{"model_request", "file_read", "context_load", "file_write", "file_edit", "shell_exec", "deploy", "external_api_write", "mystery"} {
		got[op] = ClassifyOperation(op).String()
	}
	want := map[string]string{"model_request": "safe", "file_read": "safe", "context_load": "safe", "file_write": "conditional",
		"file_edit": "conditional", "shell_exec": "irreversible", "deploy": "irreversible", "external_api_write": "irreversible", "mystery": "irreversible"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ClassifyOperation mismatch (-want +got):\n%s", diff)
	}
}
