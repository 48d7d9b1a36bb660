package client

import "testing"

func TestParseStarted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		line    string
		pgid    int
		wantErr string
	}{
		{"pid 4242", 4242, ""},
		{"pid 0", 0, `supervisor: bad report "pid 0"`},
		{"pid x", 0, `supervisor: bad report "pid x"`},
		{"error exec: \"nope\": executable file not found in $PATH", 0, "exec: \"nope\": executable file not found in $PATH"},
		{"hello", 0, `supervisor: bad report "hello"`},
	}
	for _, tt := range tests {
		pgid, err := parseStarted(tt.line)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if pgid != tt.pgid || got != tt.wantErr {
			t.Errorf("parseStarted(%q) = %d, %q; want %d, %q", tt.line, pgid, got, tt.pgid, tt.wantErr)
		}
	}
}
