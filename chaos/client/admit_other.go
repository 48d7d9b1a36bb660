//go:build !linux

package client

import "time"

// newCPUSource returns nil: without /proc the admission falls back to
// its count (Admission.Fallback).
func newCPUSource() (func([]int) map[int]time.Duration, func() time.Duration) { return nil, nil }
