// The parallel chunk engine: Run's files cut into line-aligned chunks,
// read by workers each into its own acc, their malformed lines put back in
// file order.

package analyze

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/retrylab/retrylab/trace"

	"github.com/retrylab/retrylab/internal/regfile"
)

// taskResult is what reading one chunk gave, besides its events.
type taskResult struct {
	malformed []*trace.LineError // line numbers relative to the chunk
	extra     int64
	lines     int // lines in the chunk, when it was read to its end
	err       error
}

// readTasks reads the chunks with workers goroutines, each into its own
// acc. An I/O error ends everything (cancel); a strict line error waits for
// its file's earlier chunks.
func readTasks(ctx context.Context, cancel context.CancelFunc, tasks []chunk, workers int, by []string, opts Options) ([]taskResult, []*acc) {
	results := make([]taskResult, len(tasks))
	accs := make([]*acc, workers)
	next := make(chan int)
	var wg sync.WaitGroup
	for w := range workers {
		a := newAcc(by)
		accs[w] = a
		wg.Go(func() {
			for i := range next {
				if ctx.Err() != nil {
					continue
				}
				res := &results[i]
				res.lines, res.err = a.readChunk(ctx, tasks[i], opts, func(le *trace.LineError) error {
					if opts.Strict {
						return le
					}
					if len(res.malformed) < maxReportedPerFile {
						res.malformed = append(res.malformed, le)
					} else {
						res.extra++
					}
					return nil
				})
				var le *trace.LineError
				if res.err != nil && !errors.As(res.err, &le) {
					cancel()
				}
			}
		})
	}
	for i := range tasks {
		next <- i
	}
	close(next)
	wg.Wait()
	return results, accs
}

// fileLines turns the chunks' line numbers, relative to their start, into
// the file's, adding the lines of its earlier chunks; the first error, in
// file order, is returned.
func fileLines(tasks []chunk, results []taskResult) error {
	offset := 0
	for i, t := range tasks {
		if t.index == 0 {
			offset = 0
		}
		r := &results[i]
		for _, le := range r.malformed {
			le.Line += offset
		}
		if err := r.err; err != nil {
			var le *trace.LineError
			if errors.As(err, &le) {
				le.Line += offset
			}
			return err
		}
		offset += r.lines
	}
	return nil
}

// reportMalformed hands report at most maxReportedPerFile malformed lines
// per file, whatever its chunks (each chunk kept its first ones, so the
// file's first ones are here), then one line saying how many more.
func reportMalformed(tasks []chunk, results []taskResult, report func(*trace.LineError)) {
	var reported int
	var extra int64
	var last *trace.LineError
	for i, r := range results {
		if tasks[i].index == 0 {
			reported, extra, last = 0, 0, nil
		}
		for _, le := range r.malformed {
			if reported < maxReportedPerFile {
				report(le)
				reported++
				last = le
			} else {
				extra++
			}
		}
		extra += r.extra
		if endOfFile := i+1 == len(tasks) || tasks[i+1].index == 0; endOfFile && extra > 0 && last != nil {
			report(&trace.LineError{File: tasks[i].path, Line: last.Line,
				Reason: fmt.Sprintf("and %d more malformed lines after this one", extra)})
		}
	}
}

// chunk is a byte range of a file, read by one worker. index is its
// position among the file's chunks; end < 0 means to the end.
type chunk struct {
	path       string
	index      int
	start, end int64
}

// chunkMin is the smallest chunk a large plain file is split into.
var chunkMin int64 = 16 << 20 // a variable for tests

// planChunks splits large plain files into line-aligned chunks so that one
// big trace still uses every worker. Standard input and gzip files are read
// whole.
func planChunks(files []string, workers int) ([]chunk, error) {
	var tasks []chunk
	for _, path := range files {
		whole := chunk{path: path, end: -1}
		if path == trace.StdinName || workers < 2 {
			tasks = append(tasks, whole)
			continue
		}
		fi, err := os.Stat(path)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() < 2*chunkMin {
			tasks = append(tasks, whole) // errors surface when the file is read
			continue
		}
		f, err := regfile.Open(path) // a FIFO swapped in since the Stat: not opened
		if err != nil {
			tasks = append(tasks, whole)
			continue
		}
		bounds, err := lineBounds(f, fi.Size(), min(int64(workers*4), fi.Size()/chunkMin))
		f.Close()
		if err != nil {
			return nil, trace.ReadError(path, err)
		}
		if bounds == nil {
			tasks = append(tasks, whole)
			continue
		}
		for i := 0; i+1 < len(bounds); i++ {
			tasks = append(tasks, chunk{path: path, index: i, start: bounds[i], end: bounds[i+1]})
		}
	}
	return tasks, nil
}

// lineBounds returns n+1 offsets that cut f into about n pieces, each cut
// just after a '\n'; nil if f is gzip.
func lineBounds(f *os.File, size, n int64) ([]int64, error) {
	buf := make([]byte, 64<<10)
	if _, err := f.ReadAt(buf[:2], 0); err != nil {
		return nil, err
	}
	if buf[0] == 0x1f && buf[1] == 0x8b {
		return nil, nil
	}
	bounds := []int64{0}
	for i := int64(1); i < n; i++ {
		pos := max(size*i/n, bounds[len(bounds)-1])
		for {
			m, err := f.ReadAt(buf, pos)
			if j := bytes.IndexByte(buf[:m], '\n'); j >= 0 {
				pos += int64(j) + 1
				break
			}
			pos += int64(m)
			if err != nil { // io.EOF: no newline before the end
				pos = size
				break
			}
		}
		if pos >= size {
			break
		}
		if pos > bounds[len(bounds)-1] {
			bounds = append(bounds, pos)
		}
	}
	return append(bounds, size), nil
}

// readChunk reads one chunk and returns how many lines it held.
func (a *acc) readChunk(ctx context.Context, c chunk, opts Options, malformed func(*trace.LineError) error) (int, error) {
	path := c.path
	var r *trace.Reader
	var err error
	switch src, ok := opts.Streams[path]; {
	case c.end >= 0:
		r, err = trace.OpenChunk(ctx, path, c.start, c.end)
	case ok && path != trace.StdinName:
		r, err = trace.OpenStream(ctx, path, src)
	case path == trace.StdinName && opts.Stdin != nil:
		r, err = trace.OpenStream(ctx, trace.StdinName, opts.Stdin)
	default:
		r, err = trace.OpenContext(ctx, path)
	}
	if err != nil {
		if ctx.Err() != nil {
			return 0, fmt.Errorf("%s: %w", path, context.Cause(ctx))
		}
		return 0, trace.ReadError(path, err)
	}
	defer r.Close()
	err = a.readEvents(ctx, r, path, malformed)
	return r.Lines(), err
}

func (a *acc) readEvents(ctx context.Context, r *trace.Reader, path string, malformed func(*trace.LineError) error) error {
	fileRun := fileRunPrefix + path
	r.ReadMembers(a.membersOf)
	var lastRunID []byte
	var lastRun *runState
	var lastKey string
	for n := 0; ; n++ {
		if n&0xfff == 0 && ctx.Err() != nil {
			return fmt.Errorf("%s: stopped reading: %w", path, context.Cause(ctx))
		}
		ev, err := r.Next()
		if err != nil {
			if err == io.EOF {
				return nil
			}
			if ctx.Err() != nil {
				return fmt.Errorf("%s: stopped reading: %w", path, context.Cause(ctx))
			}
			var le *trace.LineError
			if errors.As(err, &le) {
				a.cur = payloadFields{}
				a.cur9, a.dirty9 = extraFields{}, false
				a.malformed++
				if err := malformed(le); err != nil {
					return err
				}
				continue
			}
			return trace.ReadError(path, err)
		}
		a.events++
		// Find the run, reusing the last one while runId does not change.
		var run *runState
		if lastRun != nil && string(ev.RunID) == string(lastRunID) {
			run = lastRun
		} else {
			key := fileRun
			if len(ev.RunID) > 0 {
				key = trace.RawLabel(ev.RunID)
			}
			run = a.runs[key]
			if run == nil {
				run = &runState{}
				a.runs[key] = run
			}
			lastRun, lastKey = run, key
			lastRunID = append(lastRunID[:0], ev.RunID...)
		}
		switch ev.Type {
		case trace.TypeMockRequest, trace.TypeMockResponse:
			continue // the mock's journal: not a client event, not a run
		}
		run.counted = true
		a.event(ev, run, lastKey)
		a.cur = payloadFields{}
		if a.dirty9 {
			a.cur9, a.dirty9 = extraFields{}, false
		}
	}
}
