package trace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/retrylab/retrylab/internal/regfile"
	"github.com/retrylab/retrylab/trace/internal/fileio"
)

// IsTraceFile reports whether name is a trace file by its name: *.jsonl or *.jsonl.gz.
func IsTraceFile(name string) bool {
	return strings.HasSuffix(name, ".jsonl") || strings.HasSuffix(name, ".jsonl.gz")
}

// Discover expands paths into trace files: a file is taken as it is
// (whatever its name), "-" stands for standard input, a folder is searched
// recursively for *.jsonl and *.jsonl.gz (trace.jsonl and the mock's
// server.jsonl included), and a path that does not exist is tried as a glob.
// The result is sorted within each argument and free of duplicates: a file
// named twice (even as "f", "./f" and "/abs/f", or through a symlink) is read
// once, under the first name it was given.
// A path that matches nothing, or a folder without traces, is a *PathError.
//
// In a folder, and among the matches of a glob, entries that are not
// regular files (FIFOs, sockets, devices, symbolic links to them, broken
// links and link loops) are skipped, never opened; Discover says nothing of
// them: DiscoverNotes does. A glob whose every match is skipped is a
// *PathError naming why. A FIFO or device named explicitly is read (bash's
// <(...) is one).
func Discover(paths []string) ([]string, error) {
	return DiscoverContext(context.Background(), paths, nil)
}

// DiscoverNotes is Discover calling note (if not nil) with each file of a
// folder or glob it skips and why, e.g. "skipped: not a regular file
// (named pipe)".
func DiscoverNotes(paths []string, note func(path, reason string)) ([]string, error) {
	return DiscoverContext(context.Background(), paths, note)
}

// DiscoverContext is DiscoverNotes giving up when ctx is done (a walk of a
// huge tree, such as /, can take minutes): the error then wraps the
// context's cause.
func DiscoverContext(ctx context.Context, paths []string, note func(path, reason string)) ([]string, error) {
	if note == nil {
		note = func(string, string) {}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("stopped searching for traces: %w", context.Cause(ctx))
	}
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		k := sameFileKey(p)
		if !seen[k] {
			seen[k] = true
			out = append(out, p)
		}
	}
	for _, p := range paths {
		if p == StdinName {
			add(p)
			continue
		}
		found, err := discoverPath(ctx, p, note)
		if err != nil {
			return nil, err
		}
		for _, f := range found {
			add(f)
		}
	}
	return out, nil
}

// discoverPath returns the traces one path names: the file itself, the
// trace files of a folder (sorted), or what a glob matches.
func discoverPath(ctx context.Context, p string, note func(path, reason string)) ([]string, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return discoverMissing(ctx, p, err, note)
	}
	if fi.Mode()&fs.ModeSocket != 0 { // opening one fails with "no such device or address"
		return nil, &PathError{Path: p, Reason: "is a socket, not a file: nothing to read",
			hint: "give trace files, run folders, a FIFO or - for stdin"}
	}
	if !fi.IsDir() {
		return []string{p}, nil
	}
	return discoverFolder(ctx, p, note)
}

// discoverMissing handles a path that cannot be stat'ed: a link loop, a
// broken link, an unreadable path, or a glob (a match that is not a
// regular file or a folder is skipped with a note, as in a walk: a FIFO
// would block).
func discoverMissing(ctx context.Context, p string, err error, note func(path, reason string)) ([]string, error) {
	if errors.Is(err, syscall.ELOOP) {
		return nil, &PathError{Path: p, Reason: "symbolic link loop: the link leads back to itself", Err: err,
			hint: "fix or remove the link, or leave it out of the paths"}
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, &PathError{Path: p, Reason: "cannot read: " + fileio.Cause(err), Err: err}
	}
	// A link whose target is gone exists itself: it is not a glob (trying
	// it as one matched the link again, without end).
	if _, lerr := os.Lstat(p); lerr == nil {
		return nil, &PathError{Path: p, Reason: "broken symbolic link: its target does not exist", Err: err}
	}
	matches, gerr := filepath.Glob(p)
	if gerr != nil {
		return nil, &PathError{Path: p, Reason: "bad glob pattern", Err: gerr}
	}
	if len(matches) == 0 {
		return nil, &PathError{Path: p, Reason: "no such file or folder", Err: err}
	}
	kept := matches[:0]
	var skipped string
	for _, m := range matches {
		if reason := globSkip(m); reason != "" {
			note(m, "skipped: "+reason)
			if skipped == "" {
				skipped = m + ": " + reason
			}
			continue
		}
		kept = append(kept, m)
	}
	if len(kept) == 0 {
		return nil, &PathError{Path: p, Reason: "the glob matches nothing readable as a trace (" + skipped + ")",
			hint: "fix or remove what it matches, or give the trace files or run folders themselves"}
	}
	return DiscoverContext(ctx, kept, note)
}

// discoverFolder walks folder p for trace files, skipping what is not a
// regular file with a note; it stops when ctx ends.
func discoverFolder(ctx context.Context, p string, note func(path, reason string)) ([]string, error) {
	root := p
	if li, err := os.Lstat(p); err == nil && li.Mode()&fs.ModeSymlink != 0 {
		root = p + string(filepath.Separator) // WalkDir would not enter a link
	}
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return errStopped
		}
		if d.IsDir() && path != root && isClientHome(path) {
			return filepath.SkipDir
		}
		if d.IsDir() || !IsTraceFile(d.Name()) {
			return nil
		}
		if reason := notRegular(path, d); reason != "" {
			note(path, "skipped: "+reason)
			return nil
		}
		found = append(found, path)
		return nil
	})
	if err == errStopped {
		return nil, fmt.Errorf("%s: stopped searching for traces: %w", p, context.Cause(ctx))
	}
	if err != nil {
		return nil, &PathError{Path: p, Reason: "cannot read folder: " + err.Error(), Err: err}
	}
	if len(found) == 0 {
		return nil, &PathError{Path: p, Reason: "folder holds no trace files (*.jsonl, *.jsonl.gz)"}
	}
	slices.Sort(found)
	return found, nil
}

// isClientHome reports whether folder path is the HOME chaos run gives an
// external client inside its scenario folder (a folder named home beside
// the scenario's result.json or server.jsonl): what an agent writes there
// (Claude Code's and Codex's session files are JSONL) is not a trace.
func isClientHome(path string) bool {
	if filepath.Base(path) != "home" {
		return false
	}
	dir := filepath.Dir(path)
	for _, f := range []string{"result.json", "server.jsonl"} {
		if fi, err := os.Lstat(filepath.Join(dir, f)); err == nil && fi.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// errStopped ends a folder walk whose context is done.
var errStopped = errors.New("stopped")

// globSkip says why the match m of a glob is not to be read, or "" for a
// regular file, a folder, or a link to either. Nothing is opened.
func globSkip(m string) string {
	li, err := os.Lstat(m)
	if err != nil {
		return "cannot read: " + fileio.Cause(err)
	}
	if li.IsDir() {
		return ""
	}
	if li.Mode()&fs.ModeSymlink != 0 {
		if fi, err := os.Stat(m); err == nil && fi.IsDir() {
			return ""
		}
	}
	return notRegular(m, fs.FileInfoToDirEntry(li))
}

// notRegular says why the folder entry d at path is not to be read, or ""
// for a regular file or a link to one. Nothing is opened: a FIFO would block.
func notRegular(path string, d fs.DirEntry) string {
	t := d.Type()
	if t.IsRegular() {
		return ""
	}
	if t&fs.ModeSymlink != 0 {
		fi, err := os.Stat(path)
		switch {
		case errors.Is(err, syscall.ELOOP):
			return "symbolic link loop"
		case errors.Is(err, fs.ErrNotExist):
			return "broken symbolic link"
		case err != nil:
			return "cannot follow the symbolic link: " + fileio.Cause(err)
		case fi.Mode().IsRegular():
			return ""
		case fi.IsDir():
			return "symbolic link to a folder (not followed)"
		}
		return "symbolic link to a " + regfile.TypeOf(fi.Mode()).Noun
	}
	return "not a regular file (" + regfile.TypeOf(t).Noun + ")"
}

// sameFileKey names the file p refers to, whatever spelling of its path was
// used, so that a file given twice is counted once.
func sameFileKey(p string) string {
	if p == StdinName {
		return p
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		p = real
	}
	return p
}
