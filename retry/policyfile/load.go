package policyfile

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/retrylab/retrylab/internal/regfile"
	"github.com/retrylab/retrylab/internal/yamldiag"
	"github.com/retrylab/retrylab/retry"
	"github.com/retrylab/retrylab/retry/preset"
)

// Error is every problem found in a policy: each with its file, line,
// column and field (e.g. "failureTypes.rate_limit.initialDelay"), what is
// wrong and what to do about it. Error() reads "file:line:column: field:
// msg", one problem a line with its hint under it when there are several;
// callers print Hint() on its own line.
type Error struct {
	problems yamldiag.List
}

var _ error = (*Error)(nil)

func (e *Error) Error() string { return e.problems.Error() }

// Hint says what to do next: the problem's own hint when there is one,
// else what to do about them all (each hint is in Error's text then).
func (e *Error) Hint() string {
	return e.problems.Hint("fix the problems above; docs/policy.md lists the fields and their values")
}

// Problems returns each problem, in position order.
func (e *Error) Problems() yamldiag.List { return e.problems }

// newError is an Error of one problem, in file, at no line.
func newError(file, msg, hint string) *Error {
	c := newCollector(file)
	c.AddAt(0, 0, "", msg, hint)
	return &Error{c.List()}
}

// newCollector collects the problems of the policy file file ("policy"
// when it has no name).
func newCollector(file string) *yamldiag.Collector {
	if file == "" {
		file = "policy"
	}
	return yamldiag.New(file)
}

// Load reads and parses the policy file at path (a per-project
// policy, seed 004 US-004). A file that cannot be read is an *Error
// naming it, with a hint; errors inside it name path:line and the field.
// A relative path is the caller's to resolve (a scenario's is relative to
// the scenario file).
func Load(path string) (*retry.Policy, error) {
	fail := func(msg, help string) (*retry.Policy, error) {
		return nil, newError(path, msg, help)
	}
	readHelp := "give the path of a policy YAML file, or a preset name: " + strings.Join(preset.Names(), ", ")
	// Only a regular file is opened: opening a FIFO would block, and a
	// device such as /dev/zero never ends.
	data, err := regfile.ReadFile(path, MaxFileBytes)
	var nr *regfile.NotRegularError
	var tl *regfile.TooLargeError
	switch {
	case errors.As(err, &nr):
		return fail(nr.Problem(), readHelp+" (a FIFO would wait for a writer and a device may never end, so neither is opened)")
	case errors.As(err, &tl):
		return fail(fmt.Sprintf("the policy file is over the %d-byte limit", MaxFileBytes),
			"a policy is a few dozen lines; check that the path names a policy file")
	case err != nil:
		return fail("cannot read the policy file: "+pathErrMsg(err), readHelp)
	}
	return Parse(data, path)
}

// MaxFileBytes bounds what Load reads.
const MaxFileBytes = 1 << 20

func pathErrMsg(err error) string {
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
