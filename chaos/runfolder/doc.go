// Package runfolder opens and writes the files of a run folder without
// following a client's links (runfolder*.go: a link or a FIFO a client
// left there is refused, unopened, and says so), and says what went wrong
// writing output, with the next step (outerr.go: OutputError, InfraError).
// It imports nothing of chaos; cmd/retrylab uses it for its own output.
package runfolder
