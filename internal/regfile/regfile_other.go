//go:build !unix

package regfile

import (
	"errors"
	"io"
)

// openNonBlock is nothing here: Open's Stat and Fstat checks stand alone.
const openNonBlock = 0

// OpenPipe is not supported here: there are no FIFOs to open.
func OpenPipe(path string) (io.ReadCloser, error) {
	return nil, errors.New(path + ": FIFOs are not supported on this system")
}
