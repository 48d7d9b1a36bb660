//go:build !linux

package client

import "time"

// newCPUSource returns nil: without /proc the admission falls back to
// its count (Admission.Count).
func newCPUSource() (func([]int) map[int]time.Duration, func() time.Duration, func() (time.Duration, time.Duration, int)) {
	return nil, nil, nil
}
