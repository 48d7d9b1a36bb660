package chaos

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// A run folder is the clients' sandbox: what a client leaves there (a
// symbolic link, a FIFO) must not make the runner write outside it. The
// runner's own files are written to a fresh temporary file and renamed into
// place (a rename replaces a link; it never writes through one), and the
// folders it makes are checked to be folders, not links to elsewhere.

// WriteFileAtomic writes data to path through a temporary file in the same
// folder and a rename, so that a link or FIFO a client put at path is
// replaced, never followed, and a reader never sees half a file.
//
// A device at path is an error, never replaced: no client makes one, and a
// path such as /dev/full belongs to the system.
func WriteFileAtomic(path string, data []byte) error {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeDevice != 0 {
		return fmt.Errorf("%s is a device, not a file: not replaced", path)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// makeRunSubdir makes the folder dir, whose parent the runner made. A
// symbolic link or any other non-folder a client left at dir is removed
// first (the link itself, not its target): a scenario's files are written
// and scrubbed inside dir, which must not lead out of the run folder.
func makeRunSubdir(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	for range 3 { // a client may race the check; give up after a few tries
		err := os.Mkdir(dir, 0o755)
		if err == nil || !errors.Is(err, fs.ErrExist) {
			return err
		}
		fi, lerr := os.Lstat(dir)
		if lerr != nil {
			continue
		}
		if fi.IsDir() {
			return nil
		}
		if rerr := os.Remove(dir); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			return fmt.Errorf("%s is not a folder (mode %v) and cannot be removed: %w", dir, fi.Mode(), rerr)
		}
	}
	return fmt.Errorf("%s: something keeps replacing the folder", dir)
}
