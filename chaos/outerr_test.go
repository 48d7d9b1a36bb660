package chaos

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
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

// TestWriteJSONFullDisk: a result that cannot be written for a full disk
// says so, with a hint.
func TestWriteJSONFullDisk(t *testing.T) {
	t.Parallel()
	// A full disk cannot be made here; its error is what the hint is
	// chosen from.
	err := outputErr("", "runs/x/summary.json", &os.PathError{Op: "write", Path: "runs/x/summary.json", Err: syscall.ENOSPC})
	var oe *OutputError
	if !errors.As(err, &oe) || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(oe.Hint(), "full") {
		t.Fatalf("outputErr(ENOSPC) = %v, want an OutputError for ENOSPC with a hint", err)
	}
}

// TestWriteJSONNeverReplacesDevice is a regression test: writing a result
// to a device path through a temporary file and a rename replaced the
// device node itself (run as root, the test turned /dev/full into a file).
func TestWriteJSONNeverReplacesDevice(t *testing.T) {
	t.Parallel()
	dev := filepath.Join(t.TempDir(), "null")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3); err != nil { // like /dev/null
		t.Skipf("cannot make a device here (needs root): %v", err)
	}
	if err := writeJSON(dev, Summary{}); err == nil {
		t.Fatal("writeJSON on a device succeeded; want an error, the device left alone")
	}
	if fi, err := os.Lstat(dev); err != nil || fi.Mode()&os.ModeDevice == 0 {
		t.Fatalf("the device was replaced: %v, %v", fi.Mode(), err)
	}
}
