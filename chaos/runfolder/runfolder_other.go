//go:build !unix

package runfolder

import "errors"

// openNoFollow is nothing here: OpenRunFile's Lstat and Stat checks stand
// alone.
const openNoFollow = 0

// errWouldBlock is never returned here.
var errWouldBlock = errors.New("would block")

func isLinkErr(error) bool { return false }
