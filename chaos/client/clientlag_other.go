//go:build !linux

package client

// newLagSource returns nil: only Linux offers per-thread run-queue waits
// (/proc/PID/task/TID/schedstat); elsewhere external clients get the fixed
// ExternalAllowance alone, and the delay checks say so.
func newLagSource() lagSource { return nil }
