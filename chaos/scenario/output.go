package scenario

// OutputExpect is expect.output: what an external client must (and must
// not) have printed on its stdout, plain case-sensitive substrings; e.g.
// that an agent printed the whole answer (the scenario's ok.text) and not
// a partial one.
type OutputExpect struct {
	Contains    []string `yaml:"contains"`
	NotContains []string `yaml:"notContains"`
}
