package scenario

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Missing is a client requirement that is not here.
type Missing struct {
	need      string // as written in client.requires
	shown     string // as a person finds it: relative to the current folder
	notInPath bool   // a program name not found in PATH
	Hint      string // client.requiresHint
}

// Reason is Result.SkipReason: "needs X, which does not exist (hint: H)".
func (m *Missing) Reason() string {
	msg := fmt.Sprintf("needs %s, which does not exist", m.need)
	if m.notInPath {
		msg = fmt.Sprintf("needs %s, which is not in PATH", m.need)
	}
	if m.Hint == "" {
		return msg
	}
	return msg + " (hint: " + m.Hint + ")"
}

// What is Result.SkipMissing: the path, or "NAME (not in PATH)".
func (m *Missing) What() string {
	if m.notInPath {
		return m.need + " (not in PATH)"
	}
	return m.shown
}

// MissingRequirement returns the first of sc's client.requires missing
// here, or nil: a bare name must be in PATH, a path must exist in the
// current folder or relative to the scenario file's folder.
func MissingRequirement(sc *Scenario) *Missing {
	for _, req := range sc.Client.Requires {
		if !strings.ContainsRune(req, '/') {
			if _, err := exec.LookPath(req); err != nil {
				return &Missing{need: req, shown: req, notInPath: true, Hint: sc.Client.RequiresHint}
			}
			continue
		}
		if _, err := os.Stat(req); err == nil {
			continue
		}
		shown := req
		if sc.File != "" && !filepath.IsAbs(req) {
			alt := filepath.Join(filepath.Dir(sc.File), req)
			if _, err := os.Stat(alt); err == nil {
				continue
			}
			shown = alt
		}
		return &Missing{need: req, shown: shown, Hint: sc.Client.RequiresHint}
	}
	return nil
}
