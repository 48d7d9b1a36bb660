package chaos

import (
	"io"
	"os"
)

// StartSleeperForTest starts argv as an external client is started (under
// the supervisor on Linux) and returns its process group.
func StartSleeperForTest(argv []string) (int, error) {
	p, err := startClient(argv, os.Environ(), io.Discard, io.Discard)
	if err != nil {
		return 0, err
	}
	return p.pgid, nil
}
