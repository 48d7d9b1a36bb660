package main

import (
	"github.com/retrylab/retrylab/chaos/scenario"
)

// inheritEnvUsage is the help of --inherit-env, alike in chaos run and
// chaos probe.
const inheritEnvUsage = "pass the variable NAME of this environment to every external client as it is (repeatable, or NAME,NAME); " +
	"a client gets only PATH, the locale, TERM, the toolchains' folders and the harness's variables otherwise (docs/chaos.md, External clients)"

// addInheritEnvFlag adds --inherit-env to fs, collecting its names in p.
func addInheritEnvFlag(fs *flagSet, p *[]string) {
	fs.StringSliceVar(p, "inherit-env", nil, inheritEnvUsage)
}

// checkInheritEnv rejects a --inherit-env name that is no variable's
// name, or one the harness sets itself, before anything runs.
func checkInheritEnv(names []string) error {
	for _, n := range names {
		if problem, hint := scenario.InheritEnvProblem(n); problem != "" {
			return usageErrorf(hint, "bad --inherit-env: %s", problem)
		}
	}
	return nil
}
