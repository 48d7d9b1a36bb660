//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package errreport

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// lockWait bounds how long lockFile waits; staleLock is the age after which
// a lock file is taken to belong to a writer that died.
const (
	lockWait  = 30 * time.Second
	staleLock = time.Minute
)

// lockFile, where flock is not available, creates path exclusively
// (O_EXCL) and waits, polling, while another writer holds it; a lock file
// older than staleLock is removed as the leftover of a writer that died.
// unlock removes it.
func lockFile(path string) (unlock func(), err error) {
	deadline := time.Now().Add(lockWait)
	for {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			f.Close()
			return func() { os.Remove(path) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		if fi, serr := os.Stat(path); serr == nil && time.Since(fi.ModTime()) > staleLock {
			os.Remove(path)
			continue
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("lock %s held for more than %s", path, lockWait)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
