//go:build !unix

package retry

import "errors"

func mkfifo(string) error { return errors.New("no FIFOs on this platform") }
