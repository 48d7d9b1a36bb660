//go:build unix

package runfolder

import (
	"errors"
	"syscall"
)

// openNoFollow makes an open fail on a symbolic link (ELOOP) and never
// block on a FIFO.
const openNoFollow = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// errWouldBlock is an open for writing of a FIFO nobody reads (ENXIO).
var errWouldBlock = syscall.ENXIO

// isLinkErr reports an O_NOFOLLOW open that met a symbolic link.
func isLinkErr(err error) bool {
	return errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK)
}
