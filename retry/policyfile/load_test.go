package policyfile

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// TestLoadPolicyFile: a per-project policy file (seed 004 US-004), and the
// errors that name it.
func TestLoadPolicyFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := dir + "/policy.yaml"
	if err := os.WriteFile(path, []byte("preset: plandex\nmaxAttempts: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Load(path)
	if err != nil || p.MaxAttempts != 3 || p.Name != "plandex" {
		t.Fatalf("LoadPolicyFile = %+v, %v", p, err)
	}
	_, err = Load(dir + "/missing.yaml")
	var pe *Error
	if !errors.As(err, &pe) || err.Error() != dir+"/missing.yaml: cannot read the policy file: no such file or directory" || pe.Hint() == "" {
		t.Errorf("missing file: %v", err)
	}
	os.WriteFile(path, []byte("preset: plandex\nmaxDelay: soon\n"), 0o644)
	if _, err := Load(path); err == nil || err.Error() != path+`:2:11: maxDelay: bad duration "soon"` {
		t.Errorf("bad file: %v", err)
	}
}

// TestLoadPolicyFileHostile: a path that names a folder, a FIFO, a device or
// a huge file is refused at once with a reason, never read.
func TestLoadPolicyFileHostile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := dir + "/big.yaml"
	if err := os.WriteFile(big, make([]byte, MaxFileBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := dir + "/fifo.yaml"
	if err := mkfifo(fifo); err != nil {
		t.Logf("no FIFO here (%v): that case is skipped", err)
		fifo = ""
	}
	link := ""
	if fifo != "" {
		link = dir + "/link.yaml"
		if err := os.Symlink(fifo, link); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ path, want string }{
		{dir, "not a regular file"},
		{big, "over the 1048576-byte limit"},
		{fifo, "is a FIFO (named pipe), not a regular file"},
		{link, "is a symbolic link to a FIFO (named pipe), not a regular file"},
		{"/dev/zero", "not a regular file"},
	} {
		if tc.path == "" {
			continue
		}
		_, err := Load(tc.path)
		var pe *Error
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) || pe.Hint() == "" {
			t.Errorf("LoadPolicyFile(%s) = %v, want a *PolicyError with %q and a hint", tc.path, err, tc.want)
		}
	}
}
