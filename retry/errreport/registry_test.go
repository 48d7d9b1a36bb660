package errreport

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

// testCategory is the category of each failure type these tests use, as
// retry.ClassOf gives it.
var testCategory = map[string]string{"rate_limit": "retryable", "overloaded": "retryable", "timeout": "retryable",
	"quota_exhausted": "non-retryable", "auth_invalid": "non-retryable", "billing_error": "conditional"}

// testReport is a Report as the retry core makes one for a request that
// failed with ft, i minutes after t0.
func testReport(i int, ft string) *Report {
	tag := TagExhausted
	if testCategory[ft] == categoryNonRetryable {
		tag = TagUnrecoverable
	}
	return &Report{ID: fmt.Sprintf("r-%03d", i), Time: t0.Add(time.Duration(i) * time.Minute), Reason: "non-retryable", Attempts: 1,
		RootCause: RootCause{Category: testCategory[ft], Type: ft, Provider: "anthropic", Model: "m", Message: fmt.Sprintf("failure %d", i)},
		Tags:      []string{tag}}
}

func ids(reports []Report) []string {
	out := []string{}
	for _, r := range reports {
		out = append(out, r.ID)
	}
	return out
}

// TestRegistryKeepsLast100: seed 001's ring buffer of 100 entries.
func TestRegistryKeepsLast100(t *testing.T) {
	t.Parallel()
	g := OpenRegistry(filepath.Join(t.TempDir(), "errors.json"))
	for i := 0; i < 103; i++ {
		if err := g.Add(testReport(i, "rate_limit")); err != nil {
			t.Fatal(err)
		}
	}
	got, err := g.ListErrors(ErrorFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 100 || got[0].ID != "r-003" || got[99].ID != "r-102" {
		t.Errorf("kept %d reports, %s to %s; want the last 100, r-003 to r-102", len(got), got[0].ID, got[len(got)-1].ID)
	}
}

// TestRegistryListErrorsFilter: category, type, provider, tag, resolved,
// since — seed 001's ListErrors(ErrorFilter{...}).
func TestRegistryListErrorsFilter(t *testing.T) {
	t.Parallel()
	g := NewRegistry(filepath.Join(t.TempDir(), "sub", "errors.json"), 10)
	for i, ft := range []string{"quota_exhausted", "rate_limit", "auth_invalid", "billing_error"} {
		if err := g.Add(testReport(i, ft)); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Resolve("r-002", t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	yes, no := true, false
	tests := []struct {
		name string
		f    ErrorFilter
		want []string
	}{
		{"all", ErrorFilter{}, []string{"r-000", "r-001", "r-002", "r-003"}},
		{"non-retryable", ErrorFilter{Category: "non-retryable"}, []string{"r-000", "r-002"}},
		{"conditional", ErrorFilter{Category: "conditional"}, []string{"r-003"}},
		{"type", ErrorFilter{Type: "rate_limit"}, []string{"r-001"}},
		{"unresolved", ErrorFilter{Resolved: &no}, []string{"r-000", "r-001", "r-003"}},
		{"resolved", ErrorFilter{Resolved: &yes}, []string{"r-002"}},
		{"since", ErrorFilter{Since: t0.Add(2 * time.Minute)}, []string{"r-002", "r-003"}},
		{"unrecoverable, unresolved, since", ErrorFilter{Tag: TagUnrecoverable, Resolved: &no, Since: t0}, []string{"r-000"}},
		{"provider", ErrorFilter{Provider: "openai"}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := g.ListErrors(tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, ids(got)); diff != "" {
				t.Errorf("ListErrors mismatch (-want +got):\n%s", diff)
			}
		})
	}
	if err := g.Resolve("nope", t0); err == nil || !strings.Contains(err.Error(), `no report "nope"`) {
		t.Errorf("Resolve(unknown) = %v", err)
	}
}

// TestRegistryEmpty: a registry that was never written lists nothing.
func TestRegistryEmpty(t *testing.T) {
	t.Parallel()
	got, err := OpenRegistry(filepath.Join(t.TempDir(), "none.json")).ListErrors(ErrorFilter{})
	if err != nil || len(got) != 0 {
		t.Errorf("ListErrors = %v, %v", got, err)
	}
}

// TestRegistryConcurrentWriters: writers in many goroutines, each through
// its own ErrorRegistry of the same file (as separate components of one
// process would), lose nothing.
func TestRegistryConcurrentWriters(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "errors.json")
	const writers, each = 8, 10
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := OpenRegistry(path)
			for i := 0; i < each; i++ {
				if err := g.Add(testReport(w*each+i, "timeout")); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	checkAllThere(t, path, writers*each)
}

func checkAllThere(t *testing.T, path string, n int) {
	t.Helper()
	got, err := OpenRegistry(path).ListErrors(ErrorFilter{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range got {
		seen[r.ID] = true
	}
	if len(got) != n || len(seen) != n {
		t.Errorf("%d reports (%d distinct), want %d: updates were lost", len(got), len(seen), n)
	}
	if leftovers, _ := filepath.Glob(path + ".tmp-*"); len(leftovers) != 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

// TestRegistryConcurrentProcesses: writers in separate processes (this test
// binary, run again as a helper) lose nothing either: the file lock orders
// them.
func TestRegistryConcurrentProcesses(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	path := filepath.Join(t.TempDir(), "errors.json")
	const procs, each = 3, 15
	var cmds []*exec.Cmd
	for p := 0; p < procs; p++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRegistryHelperProcess$")
		cmd.Env = append(os.Environ(), "RETRY_REGISTRY_HELPER="+path, "RETRY_REGISTRY_FIRST="+strconv.Itoa(p*each),
			"RETRY_REGISTRY_COUNT="+strconv.Itoa(each))
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("helper process: %v", err)
		}
	}
	checkAllThere(t, path, procs*each)
}

// TestRegistryHelperProcess is TestRegistryConcurrentProcesses's writer; it
// does nothing in a normal test run.
func TestRegistryHelperProcess(t *testing.T) {
	path := os.Getenv("RETRY_REGISTRY_HELPER")
	if path == "" {
		t.Skip("helper process only")
	}
	first, _ := strconv.Atoi(os.Getenv("RETRY_REGISTRY_FIRST"))
	n, _ := strconv.Atoi(os.Getenv("RETRY_REGISTRY_COUNT"))
	g := OpenRegistry(path)
	for i := first; i < first+n; i++ {
		if err := g.Add(testReport(i, "overloaded")); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRegistryCrashBetweenWriteAndRename: a writer that dies after writing
// its temporary file but before the rename leaves the registry as it was
// for readers; the next writer removes the leftover and loses nothing.
func TestRegistryCrashBetweenWriteAndRename(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "errors.json")
	g := OpenRegistry(path)
	if err := g.Add(testReport(1, "rate_limit")); err != nil {
		t.Fatal(err)
	}
	crashing := OpenRegistry(path)
	crashing.rename = func(string, string) error { panic("crash") }
	func() {
		defer func() { recover() }()
		crashing.Add(testReport(2, "rate_limit"))
	}()
	leftovers, _ := filepath.Glob(path + ".tmp-*")
	if len(leftovers) != 1 {
		t.Fatalf("temporary files after the crash: %v, want 1", leftovers)
	}
	got, err := g.ListErrors(ErrorFilter{})
	if err != nil || !cmp.Equal(ids(got), []string{"r-001"}) {
		t.Errorf("after the crash: %v, %v; want only r-001", ids(got), err)
	}
	if err := g.Add(testReport(3, "rate_limit")); err != nil {
		t.Fatal(err)
	}
	got, _ = g.ListErrors(ErrorFilter{})
	if diff := cmp.Diff([]string{"r-001", "r-003"}, ids(got)); diff != "" {
		t.Errorf("after the next write (-want +got):\n%s", diff)
	}
	if leftovers, _ := filepath.Glob(path + ".tmp-*"); len(leftovers) != 0 {
		t.Errorf("leftover not removed: %v", leftovers)
	}
}

// TestRegistryBadFile: a file that is not a registry is an error naming it,
// with a hint, and is never overwritten.
func TestRegistryBadFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "errors.json")
	for _, content := range []string{"not json", `{"schema":"other/v9","reports":[]}`} {
		os.WriteFile(path, []byte(content), 0o644)
		g := OpenRegistry(path)
		_, err := g.ListErrors(ErrorFilter{})
		var re *RegistryError
		if !errors.As(err, &re) || re.Path != path || re.Hint() == "" {
			t.Errorf("ListErrors on %q = %v, want a RegistryError with a hint", content, err)
		}
		if err := g.Add(testReport(1, "rate_limit")); err == nil {
			t.Errorf("Add over %q succeeded", content)
		}
		if data, _ := os.ReadFile(path); string(data) != content {
			t.Errorf("file overwritten: %q", data)
		}
	}
}

// TestRegistryFIFO (issue 18): a FIFO at the registry's path is an error
// at once, not a read blocked until a writer comes (the 10 s only detects
// a hang), and it is not replaced.
func TestRegistryFIFO(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "errors.json")
	if err := mkfifo(path); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := OpenRegistry(path).ListErrors(ErrorFilter{})
		done <- err
	}()
	select {
	case err := <-done:
		var re *RegistryError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), "is a FIFO (named pipe), not a regular file") || re.Hint() == "" {
			t.Errorf("ListErrors = %v, want a RegistryError naming the FIFO, with a hint", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ListErrors blocked on a FIFO")
	}
}
