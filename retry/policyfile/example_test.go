package policyfile_test

import (
	"errors"
	"fmt"

	"github.com/retrylab/retrylab/retry/policyfile"
)

func ExampleParse() {
	_, err := policyfile.Parse([]byte("preset: plandex\nattemptTimeout: 5 seconds\n"), "retry.yaml")
	fmt.Println("error:", err)
	var pe *policyfile.Error
	if errors.As(err, &pe) {
		fmt.Println("hint:", pe.Hint())
	}
	// Output:
	// error: retry.yaml:2:17: attemptTimeout: bad duration "5 seconds"
	// hint: use a number with a unit, like 500ms, 2s or 1m30s
}
