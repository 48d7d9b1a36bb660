//go:build !unix

package errreport

import "errors"

func mkfifo(string) error { return errors.New("no FIFOs on this platform") }
