package scenario

import (
	"errors"
	"fmt"
	"strings"
)

// ClientFile is an external client as a scenario file describes it: its
// client block (command, env, home, requires, requiresHint) and which
// requests are its attempts (attemptsMatch), loaded and validated by
// LoadScenario, so that a tool running the same client against scenarios
// of its own (chaos probe --client FILE) takes it exactly as chaos run
// would. The file may be a whole scenario (its attempts and expect are
// not used) or a client block alone.
type ClientFile struct {
	File          string
	Client        Client
	AttemptsMatch *AttemptsMatch
	// Provider and Model are the file's (the loader's defaults when it
	// names none): the wire format and model its client is run with.
	Provider, Model string
}

// LoadClient loads the client of the scenario file at path. Every problem
// is a LoadErrors naming the file, line and field, with a hint: the
// file's own (as chaos validate reports them), or a client without
// command (the built-in client is not one a probe can learn).
func LoadClient(path string) (*ClientFile, error) {
	sc, err := LoadScenario(path)
	if err != nil {
		// An empty file's hint is a scenario's ("needs at least attempts
		// and expect"), but a client block alone is what this takes.
		var le LoadErrors
		if errors.As(err, &le) && len(le) == 1 && le[0].Msg == "empty scenario file" {
			return nil, LoadErrors{{File: path, Msg: "empty file", Hint: clientHint}}
		}
		return nil, err
	}
	if len(sc.Client.Command) == 0 {
		field, msg := "client.command", "the client has no command: the file describes the built-in client"
		if _, ok := sc.Lines["client"]; !ok {
			field, msg = "client", "no client block"
		}
		return nil, LoadErrors{{File: path, Line: sc.Lines["client"], Field: field, Msg: msg,
			Hint: clientHint}}
	}
	return &ClientFile{File: path, Client: sc.Client, AttemptsMatch: sc.AttemptsMatch, Provider: sc.Provider, Model: sc.Model}, nil
}

// clientHint is the hint of a file without a client to run: a client
// block alone is enough.
const clientHint = `describe the client to run, e.g. client: {command: ["node", "agent.mjs"], env: {MY_VAR: "1"}}; a client block alone is enough (docs/chaos.md "External clients")`

// Apply makes sc's client this one: its command, environment, home files
// and requirements, its attempts' match, and its file, from whose folder
// relative paths in command and requires are resolved (as chaos run
// resolves them from the scenario file's folder).
func (c *ClientFile) Apply(sc *Scenario) {
	sc.Client.Command = c.Client.Command
	sc.Client.Env = c.Client.Env
	sc.Client.InheritEnv = c.Client.InheritEnv
	sc.Client.Home = c.Client.Home
	sc.Client.Requires = c.Client.Requires
	sc.Client.RequiresHint = c.Client.RequiresHint
	if c.AttemptsMatch != nil {
		sc.AttemptsMatch = c.AttemptsMatch
	}
	sc.File = c.File
}

// String is the client's command line, as progress lines and results show it.
func (c *ClientFile) String() string {
	return fmt.Sprintf("%s (%s)", strings.Join(c.Client.Command, " "), c.File)
}

// Missing says what of client.requires is not here ("needs kilo, which is
// not in PATH"), and the file's requiresHint; "" when all is. chaos run
// skips such a scenario; a probe of the client has nothing to run.
func (c *ClientFile) Missing() (reason, hint string) {
	m := MissingRequirement(&Scenario{File: c.File, Client: c.Client})
	if m == nil {
		return "", ""
	}
	msg := fmt.Sprintf("needs %s, which does not exist", m.shown)
	if m.notInPath {
		msg = fmt.Sprintf("needs %s, which is not in PATH", m.need)
	}
	return msg, m.Hint
}
