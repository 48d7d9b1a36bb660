package client

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestReadGroupCPU(t *testing.T) {
	root := t.TempDir()
	for pid, stat := range map[string]string{
		"10":   "10 (sh) S 1 10 10 0 -1 0 0 0 0 0 5 5 20 10 20 0",     // group 10: 40 ticks, with its reaped children
		"11":   "11 (node) R 10 10 10 0 -1 0 0 0 0 0 100 50 0 0 20 0", // group 10: 150 ticks
		"12":   "12 (curl) S 1 12 12 0 -1 0 0 0 0 0 3 1 0 0 20 0",     // group 12, not asked for
		"13":   "13 (bad",                                             // unreadable: skipped
		"self": "99 (me) S 1 99 99 0 -1 0 0 0 0 0 1 1 0 0 20 0",       // not a pid
	} {
		if err := os.MkdirAll(filepath.Join(root, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, pid, "stat"), []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := readGroupCPU(root, []int{10, 14})
	want := map[int]time.Duration{10: 1900 * time.Millisecond}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("readGroupCPU (-want +got):\n%s", diff)
	}
	if got := readGroupCPU(filepath.Join(root, "missing"), []int{10}); len(got) != 0 {
		t.Errorf("readGroupCPU of a missing root = %v", got)
	}
}
