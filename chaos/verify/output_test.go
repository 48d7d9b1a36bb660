package verify

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/chaos/scenario"
)

func TestOutputCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		oe     scenario.OutputExpect
		stdout string
		want   Check
	}{
		{
			name:   "the whole answer",
			oe:     scenario.OutputExpect{Contains: []string{"first words", "last words."}},
			stdout: "first words ... last words.\n",
			want: Check{Name: "output", Passed: true, Want: `contains "first words", contains "last words."`,
				Got: `28 bytes: "first words ... last words.\n"`, Where: "stdout.txt"},
		},
		{
			name:   "an answer cut short",
			oe:     scenario.OutputExpect{Contains: []string{"last words."}, NotContains: []string{"Error"}},
			stdout: "first words ... Error",
			want: Check{Name: "output", Want: `contains "last words.", does not contain "Error"`,
				Got: `21 bytes: "first words ... Error"`, Where: `stdout.txt: lacks "last words.", holds "Error"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, outputCheck(tt.oe, Observed{Stdout: tt.stdout})); diff != "" {
				t.Errorf("outputCheck mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReadStdoutNoLinks: stdout.txt is read as every run file is, never
// through a link a client put in its place.
func TestReadStdoutNoLinks(t *testing.T) {
	t.Parallel()
	dir, other := t.TempDir(), t.TempDir()
	secret := filepath.Join(other, "secret")
	if err := os.WriteFile(secret, []byte("not the client's"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "stdout.txt")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	if got := ReadStdout(dir); got != "" {
		t.Errorf("readStdout through a link = %q, want nothing", got)
	}
}
