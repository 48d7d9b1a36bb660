package regfile

import (
	"io/fs"
	"testing"
)

// TestTypeOf pins the three names of each file type: the messages that use
// them (NotRegularError, trace's skipped files, chaos's run files) are
// pinned by their own tests and scripts.
func TestTypeOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		mode fs.FileMode
		want Type
	}{
		{"FIFO", fs.ModeNamedPipe, Type{"a FIFO (named pipe)", "named pipe", "a FIFO"}},
		{"socket", fs.ModeSocket, Type{"a socket", "socket", "a socket"}},
		{"character device", fs.ModeDevice | fs.ModeCharDevice, Type{"a character device", "character device", "a device"}},
		{"device", fs.ModeDevice, Type{"a device", "device", "a device"}},
		{"folder", fs.ModeDir, Type{"a folder", "folder", "a folder"}},
		{"symbolic link", fs.ModeSymlink, Type{"a symbolic link", "symbolic link", "a symbolic link"}},
		{"regular file", 0, Type{"a regular file", "regular file", "a regular file"}},
		{"other", fs.ModeIrregular, Type{"not a regular file", "special file", "not a regular file"}},
	} {
		if got := TypeOf(tc.mode | 0o644); got != tc.want {
			t.Errorf("TypeOf(%s) = %+v, want %+v", tc.name, got, tc.want)
		}
		if got := Kind(tc.mode); got != tc.want.Kind {
			t.Errorf("Kind(%s) = %q, want %q", tc.name, got, tc.want.Kind)
		}
	}
}
