//go:build !unix

package main

import "os"

// maxRSSKiB is 0 where getrusage is not available: only the wall time is
// measured.
func maxRSSKiB(*os.ProcessState) int64 { return 0 }
