package chaos

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// missing is a client requirement that is not here.
type missing struct {
	need      string // as written in client.requires
	shown     string // as a person finds it: relative to the current folder
	notInPath bool   // a program name not found in PATH
	hint      string // client.requiresHint
}

// reason is Result.SkipReason: "needs X, which does not exist (hint: H)".
func (m *missing) reason() string {
	msg := fmt.Sprintf("needs %s, which does not exist", m.need)
	if m.notInPath {
		msg = fmt.Sprintf("needs %s, which is not in PATH", m.need)
	}
	if m.hint == "" {
		return msg
	}
	return msg + " (hint: " + m.hint + ")"
}

// what is Result.SkipMissing: the path, or "NAME (not in PATH)".
func (m *missing) what() string {
	if m.notInPath {
		return m.need + " (not in PATH)"
	}
	return m.shown
}

// missingRequirement returns the first of sc's client.requires missing
// here, or nil: a bare name must be in PATH, a path must exist in the
// current folder or relative to the scenario file's folder.
func missingRequirement(sc *Scenario) *missing {
	for _, req := range sc.Client.Requires {
		if !strings.ContainsRune(req, '/') {
			if _, err := exec.LookPath(req); err != nil {
				return &missing{need: req, shown: req, notInPath: true, hint: sc.Client.RequiresHint}
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
		return &missing{need: req, shown: shown, hint: sc.Client.RequiresHint}
	}
	return nil
}
