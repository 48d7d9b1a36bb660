package runfolder

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/retrylab/retrylab/internal/regfile"
)

// TestOutputErrorHints: an output that could not be written (a full disk,
// a read-only folder, a file where a folder goes) was reported as a bare
// error, without a hint.
func TestOutputErrorHints(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		want string
	}{
		{syscall.ENOSPC, "the disk (or your quota) is full: free space on it, or give --out another path"},
		{syscall.EDQUOT, "the disk (or your quota) is full"},
		{syscall.EROFS, "not writable for you: give --out another path"},
		{&fs.PathError{Op: "mkdir", Path: "x", Err: syscall.EACCES}, "not writable for you"},
		{syscall.ENOTDIR, "a file stands where a folder is needed"},
		{syscall.EISDIR, "x is a folder: give a file path"},
		{fs.ErrNotExist, "create the folder it goes in first"},
		{syscall.EMFILE, InfraHint},
		{&regfile.NotRegularError{Path: "x", Mode: fs.ModeNamedPipe, Write: true},
			"x is a FIFO (named pipe), which would block or swallow the output: give --out another path (a regular file, or none yet)"},
		{&regfile.NotRegularError{Path: "x", Mode: fs.ModeDevice | fs.ModeCharDevice, Write: true}, "x is a character device, which would"},
		{&regfile.NotRegularError{Path: "x", Mode: fs.ModeDir, Write: true}, "x is a folder: give a file path"},
	}
	for _, tt := range tests {
		e := &OutputError{What: "--out", Path: "x", Err: tt.err}
		if got := e.Hint(); !strings.Contains(got, tt.want) {
			t.Errorf("Hint() for %v = %q, want it to contain %q", tt.err, got, tt.want)
		}
		if !errors.Is(e, tt.err) {
			t.Errorf("%v does not wrap %v", e, tt.err)
		}
	}
}

// TestCheckOutDirReadOnly: a read-only --out was found only after the run.
func TestCheckOutDirReadOnly(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("root writes into read-only folders")
	}
	dir := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	err := CheckOutDir(dir)
	var oe *OutputError
	if !errors.As(err, &oe) || !strings.Contains(oe.Hint(), "not writable") {
		t.Fatalf("CheckOutDir(read-only) = %v, want an OutputError saying it is not writable", err)
	}
	if err := CheckOutDir(filepath.Join(t.TempDir(), "new", "runs")); err != nil {
		t.Errorf("CheckOutDir(a new folder) = %v", err)
	}
}

// TestCheckOutFile: an output written at the end (--policy-out, report
// html -o) is checked before anything runs: a FIFO, a device, a folder
// (or a link to one) at the path, or a missing folder, is an OutputError
// at once, and a FIFO is neither opened nor replaced.
func TestCheckOutFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	link := filepath.Join(dir, "link.yaml")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, want string
	}{
		{"a FIFO", fifo, "cannot write --policy-out (" + fifo + "): is a FIFO (named pipe), not a regular file: not written"},
		{"a link to a FIFO", link, "is a symbolic link to a FIFO (named pipe), not a regular file: not written"},
		{"a device", "/dev/null", "cannot write --policy-out (/dev/null): is a character device, not a regular file: not written"},
		{"a folder", dir, "is a directory"},
		{"in a missing folder", filepath.Join(dir, "nodir", "p.yaml"), "no such file or directory"},
		{"in a file", filepath.Join(fifo, "p.yaml"), "not a directory"},
		{"a new file", filepath.Join(dir, "p.yaml"), ""},
	}
	for _, tt := range tests {
		err := CheckOutFile("--policy-out", tt.path)
		var oe *OutputError
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: CheckOutFile = %v, want nil", tt.name, err)
		case tt.want != "" && (!errors.As(err, &oe) || !strings.Contains(err.Error(), tt.want) || oe.Hint() == ""):
			t.Errorf("%s: CheckOutFile = %v, want an OutputError with a hint saying %q", tt.name, err, tt.want)
		}
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v, %v", fi.Mode(), err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".retrylab-probe-*")); len(m) > 0 {
		t.Errorf("CheckOutFile left %v", m)
	}
}
