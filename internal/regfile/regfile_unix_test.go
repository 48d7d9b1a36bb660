//go:build unix

package regfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// prompt runs f and fails the test if it has not returned after a
// generous time: it detects a hang, it does not measure speed.
func prompt[T any](t *testing.T, f func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("blocked: still not returned after 10 s")
		panic("unreachable")
	}
}

func TestOpenRefusesWhatIsNotARegularFile(t *testing.T) {
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
		mode             fs.FileMode
	}{
		{"a FIFO blocks an open until a writer comes", fifo, "is a FIFO (named pipe), not a regular file", fs.ModeNamedPipe},
		{"a link to a FIFO is the FIFO", link, "is a symbolic link to a FIFO (named pipe)", fs.ModeNamedPipe},
		{"a folder", dir, "is a folder", fs.ModeDir},
		{"a device never ends", "/dev/zero", "is a character device", fs.ModeDevice | fs.ModeCharDevice},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := os.Stat(tt.path); err != nil {
				t.Skip(err)
			}
			for _, read := range []func() error{
				func() error { f, err := Open(tt.path); f.Close(); return err },
				func() error { _, err := ReadFile(tt.path, 1<<20); return err },
			} {
				err := prompt(t, read)
				var nr *NotRegularError
				if !errors.As(err, &nr) || nr.Mode != tt.mode || !strings.Contains(err.Error(), tt.path+" "+tt.want) {
					t.Errorf("err = %v, want a *NotRegularError of mode %v saying %q", err, tt.mode, tt.want)
				}
			}
		})
	}
}

func TestReadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "a.yaml")
	if err := os.WriteFile(p, []byte("name: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.yaml")
	if err := os.Symlink(p, link); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{p, link} {
		if b, err := ReadFile(path, 8); err != nil || string(b) != "name: x\n" {
			t.Errorf("ReadFile(%s) = %q, %v", path, b, err)
		}
	}
	var tl *TooLargeError
	if _, err := ReadFile(p, 7); !errors.As(err, &tl) {
		t.Errorf("ReadFile over the limit = %v, want a *TooLargeError", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "nope"), 8); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile of nothing = %v, want fs.ErrNotExist", err)
	}
}

func TestOpenPipe(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "alerts.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	// Nobody writes: an error at once, not a wait.
	if err := prompt(t, func() error { _, err := OpenPipe(fifo); return err }); !errors.Is(err, ErrNoWriter) {
		t.Fatalf("OpenPipe with no writer = %v, want ErrNoWriter", err)
	}
	// With a writer (bash's <(...)) it is read to the writer's end.
	w, err := os.OpenFile(fifo, os.O_RDWR, 0) // holds the FIFO open for writing
	if err != nil {
		t.Fatal(err)
	}
	r, err := prompt(t, func() func() (io.ReadCloser, error) {
		r, err := OpenPipe(fifo)
		return func() (io.ReadCloser, error) { return r, err }
	})()
	if err != nil {
		t.Fatalf("OpenPipe with a writer = %v", err)
	}
	defer r.Close()
	if _, err := w.WriteString("alerts: []\n"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if got := prompt(t, func() string { b, _ := io.ReadAll(r); return string(b) }); got != "alerts: []\n" {
		t.Errorf("read %q, want what the writer wrote", got)
	}
}

func TestCreateRefusesWhatIsNotARegularFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "junit.xml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	link := filepath.Join(dir, "link.xml")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, want string
		mode             fs.FileMode
	}{
		{"a FIFO blocks an open for writing until a reader comes", fifo, "is a FIFO (named pipe), not a regular file: not written", fs.ModeNamedPipe},
		{"a link to a FIFO is the FIFO", link, "is a symbolic link to a FIFO (named pipe)", fs.ModeNamedPipe},
		{"a folder", dir, "is a folder", fs.ModeDir},
		{"a device takes anything", "/dev/null", "is a character device", fs.ModeDevice | fs.ModeCharDevice},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := os.Stat(tt.path); err != nil {
				t.Skip(err)
			}
			for _, write := range []func() error{
				func() error { f, err := Create(tt.path); f.Close(); return err },
				func() error { return CheckOut(tt.path) },
			} {
				err := prompt(t, write)
				var nr *NotRegularError
				if !errors.As(err, &nr) || nr.Mode != tt.mode || !nr.Write || !strings.Contains(err.Error(), tt.path+" "+tt.want) {
					t.Errorf("err = %v, want a *NotRegularError (Write) of mode %v saying %q", err, tt.mode, tt.want)
				}
			}
		})
	}
}

func TestCreate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "out.xml")
	if err := os.WriteFile(p, []byte("old content, longer"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.xml")
	if err := os.Symlink(p, link); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{p, link, filepath.Join(dir, "new.xml")} {
		if err := CheckOut(path); err != nil {
			t.Errorf("CheckOut(%s) = %v, want nil (a regular file, a link to one, none yet)", path, err)
		}
		f, err := Create(path)
		if err != nil {
			t.Fatalf("Create(%s) = %v", path, err)
		}
		if _, err := f.WriteString("new"); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if b, _ := os.ReadFile(path); string(b) != "new" {
			t.Errorf("%s holds %q after Create and a write, want %q (truncated)", path, b, "new")
		}
	}
	if _, err := Create(filepath.Join(dir, "nodir", "x")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Create in a missing folder = %v, want fs.ErrNotExist", err)
	}
}
