//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package errreport

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive flock on path (created if needed), which
// other processes taking it wait for; unlock releases it. The lock goes
// with the process, so a writer that dies never leaves it held.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
