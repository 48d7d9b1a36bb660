//go:build !unix

package policyfile

import "errors"

func mkfifo(string) error { return errors.New("no FIFOs on this platform") }
