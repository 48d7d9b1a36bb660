package main

import (
	"runtime/debug"
	"testing"
)

func TestVersionText(t *testing.T) {
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"no build info", nil, "retrylab devel\n"},
		{"go install of a tag", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.4.0"},
			Settings: []debug.BuildSetting{{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "arm64"}}},
			"retrylab v0.4.0\ngo: go1.26.8\nplatform: linux/arm64\n"},
		{"a build in a clone", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "GOARCH", Value: "amd64"}, {Key: "GOOS", Value: "windows"},
			{Key: "vcs.revision", Value: "0b89336a1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f"},
			{Key: "vcs.time", Value: "2026-12-06T09:00:00Z"}, {Key: "vcs.modified", Value: "true"}}},
			"retrylab devel-0b89336a1c2d\ncommit: 0b89336a1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f\ncommit time: 2026-12-06T09:00:00Z\nmodified: true\ngo: go1.26.8\nplatform: windows/amd64\n"},
		{"a short revision is no version", &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}}},
			"retrylab devel\ncommit: abc\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := versionText(tc.bi); got != tc.want {
				t.Errorf("versionText:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestLinkerStamp: the -X values of scripts/dist.sh fill in what the go
// command did not stamp, and never override what it did.
func TestLinkerStamp(t *testing.T) {
	defer func(a, b, c, d string) { releaseVersion, vcsRevision, vcsTime, vcsModified = a, b, c, d }(releaseVersion, vcsRevision, vcsTime, vcsModified)
	releaseVersion, vcsRevision, vcsTime, vcsModified = "0.0.0-dev.1", "1111111111111111111111111111111111111111", "2026-12-06T09:00:00Z", "false"
	unstamped := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}
	if got, want := versionText(withLinkerStamp(unstamped)), "retrylab v0.0.0-dev.1\ncommit: 1111111111111111111111111111111111111111\ncommit time: 2026-12-06T09:00:00Z\nmodified: false\n"; got != want {
		t.Errorf("unstamped build:\n got %q\nwant %q", got, want)
	}
	stamped := &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "2222222222222222"}}}
	if got, want := versionText(withLinkerStamp(stamped)), "retrylab v1.2.3\ncommit: 2222222222222222\n"; got != want {
		t.Errorf("stamped build:\n got %q\nwant %q", got, want)
	}
	if len(stamped.Settings) != 1 {
		t.Errorf("withLinkerStamp changed its argument: %v", stamped.Settings)
	}
}
