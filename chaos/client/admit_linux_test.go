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
	c := newGroupCPU(root)
	want := map[int]time.Duration{10: 1900 * time.Millisecond}
	for i := range 2 { // the second read from the cache of groups
		if diff := cmp.Diff(want, c.read([]int{10, 14})); diff != "" {
			t.Errorf("read %d (-want +got):\n%s", i+1, diff)
		}
	}
	// Group 12 watched from now on: its process, cached as another
	// group's, is read now.
	if diff := cmp.Diff(map[int]time.Duration{12: 40 * time.Millisecond}, c.read([]int{12})); diff != "" {
		t.Errorf("read of group 12 (-want +got):\n%s", diff)
	}
	// A process gone leaves the cache.
	if err := os.RemoveAll(filepath.Join(root, "12")); err != nil {
		t.Fatal(err)
	}
	if got := c.read([]int{12}); len(got) != 0 {
		t.Errorf("read of a group gone = %v", got)
	}
	if _, ok := c.pgrp[12]; ok {
		t.Error("a process gone is still cached")
	}
	if got := newGroupCPU(filepath.Join(root, "missing")).read([]int{10}); len(got) != 0 {
		t.Errorf("read of a missing root = %v", got)
	}
}

func TestReadMachineCPU(t *testing.T) {
	tests := []struct {
		name        string
		stat        string
		idle, total time.Duration
		cpus        int
	}{
		{"two CPUs", "cpu  100 5 50 800 20 1 2 3 9 0\ncpu0 50 2 25 400 10 0 1 1 0 0\ncpu1 50 3 25 400 10 1 1 2 0 0\nintr 1 2\n",
			8200 * time.Millisecond, 9810 * time.Millisecond, 2},
		{"no cpu line", "intr 1 2\n", 0, 0, 0},
		{"a bad number", "cpu 1 x 3 4 5\ncpu0 1 2 3 4 5\n", 0, 0, 0},
		{"empty", "", 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "stat")
			if err := os.WriteFile(path, []byte(tt.stat), 0o644); err != nil {
				t.Fatal(err)
			}
			idle, total, cpus := readMachineCPU(path)
			if idle != tt.idle || total != tt.total || cpus != tt.cpus {
				t.Errorf("readMachineCPU = %s, %s, %d; want %s, %s, %d", idle, total, cpus, tt.idle, tt.total, tt.cpus)
			}
		})
	}
	if _, _, cpus := readMachineCPU(filepath.Join(t.TempDir(), "missing")); cpus != 0 {
		t.Error("a missing file read as CPUs")
	}
}
