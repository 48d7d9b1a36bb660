package main

import "strings"

// formats is a command's --format: the values it takes, each with what
// renders it, in the order the flag's help and the error list them. Each
// command keeps one such list, so its help, its check and the renderer it
// picks cannot disagree.
type formats[R any] struct {
	list []format[R]
	// chaos words the error as chaos run and chaos probe always have
	// (`unknown format "x"`, hint "formats: a, b, c"); the trace commands
	// say `unknown --format "x"` and "use --format a, b or c".
	chaos bool
}

type format[R any] struct {
	name   string
	render R
}

// namesOnly is the formats of a command whose renderer takes the name
// itself (trace failures, trace export).
func namesOnly(names ...string) formats[string] {
	var fs formats[string]
	for _, n := range names {
		fs.list = append(fs.list, format[string]{n, n})
	}
	return fs
}

func (fs formats[R]) names() []string {
	out := make([]string, len(fs.list))
	for i, f := range fs.list {
		out[i] = f.name
	}
	return out
}

// help lists the values for the flag's help: "table, json or markdown".
func (fs formats[R]) help() string { return orList(fs.names()) }

// pick returns the renderer of value, or a usage error (exit 2) that
// lists the values.
func (fs formats[R]) pick(value string) (R, error) {
	for _, f := range fs.list {
		if f.name == value {
			return f.render, nil
		}
	}
	var none R
	if fs.chaos {
		return none, usageErrorf("formats: "+strings.Join(fs.names(), ", "), "unknown format %q", value)
	}
	return none, usageErrorf("use --format "+fs.help(), "unknown --format %q", value)
}

// orList says names as a list: "a", "a or b", "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
