// Gzip input: a gzip trace is decompressed as a stream, member after
// member, as gzip -d reads it.

package trace

import (
	"bufio"
	"compress/gzip"
	"context"
	"fmt"
	"io"
)

// gzipMembers decompresses a gzip file member after member, as gzip -d
// does (cat a.gz b.gz is one valid file), as a stream: memory stays bounded
// whatever the data expands to. What follows the last member must be
// nothing: other data is a *GzipTrailingDataError, not a "corrupt header".
type gzipMembers struct {
	src     *bufio.Reader // zr reads it byte by byte: nothing past a member is consumed
	zr      *gzip.Reader
	members int
	ctx     *context.Context // the Reader's, set after NewReader
}

func (g *gzipMembers) Read(p []byte) (int, error) {
	for {
		n, err := g.zr.Read(p)
		if err != io.EOF {
			return n, err
		}
		// The member ended: another one, the end of the file, or other data.
		next, perr := g.src.Peek(2)
		switch {
		case len(next) == 0 && perr == io.EOF:
			return n, io.EOF
		case len(next) < 2 || next[0] != 0x1f || next[1] != 0x8b:
			if perr != nil && perr != io.EOF {
				return n, perr
			}
			return n, &GzipTrailingDataError{Members: g.members}
		}
		if err := g.zr.Reset(g.src); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF // a header cut short
			}
			return n, err
		}
		g.zr.Multistream(false)
		g.members++
		if n > 0 {
			return n, nil
		}
		// Empty members give no bytes: read on (bufio gives up after 100
		// empty reads), but let a cancel stop a file of millions of them.
		if g.members%1024 == 0 && g.ctx != nil && *g.ctx != nil {
			if err := (*g.ctx).Err(); err != nil {
				return 0, err
			}
		}
	}
}

// GzipTrailingDataError is data that is not gzip after the last complete
// member of a gzip file (something appended to it, or zeros after it).
type GzipTrailingDataError struct {
	Members int // complete members read before the data
}

func (e *GzipTrailingDataError) Error() string {
	return fmt.Sprintf("data that is not gzip after the end of the gzip stream (after %d complete member(s))", e.Members)
}
