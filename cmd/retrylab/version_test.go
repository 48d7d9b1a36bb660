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
