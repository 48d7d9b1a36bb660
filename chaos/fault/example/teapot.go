// Package example shows that a fault kind is one file: teapot.go is a
// whole kind (decoding, validation, description, serving and judging), and
// teapot_test.go loads a scenario that uses it and serves it through the
// mock. It is kept out of package fault so that the built-in kinds' load
// messages do not list it.
package example

import (
	"fmt"

	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/internal/wire"
	"github.com/retrylab/retrylab/retry/provider"
)

// Teapot answers 418 with a message saying how short and stout it is.
type Teapot struct {
	Cups int `yaml:"cups"`
}

func init() { fault.Register(fault.Def{Kind: Teapot{}, Order: 1000, Decode: decodeTeapot}) }

func decodeTeapot(m *fault.Mapping) fault.Kind {
	var t Teapot
	m.Decode("teapot", &t)
	if t.Cups > 12 {
		m.Errorf(m.Value("teapot"), m.Path("teapot")+".cups", "a teapot holds 1 to 12 cups", "%d cups overflow the pot", t.Cups)
	}
	return t
}

func (Teapot) Name() string       { return "teapot" }
func (t Teapot) Describe() string { return fmt.Sprintf("teapot of %d cups", t.Cups) }

// Serve sends the wire format's error answer, with Wire's status.
func (Teapot) Serve(s fault.Serving) { s.Answer(true, nil) }

func (t Teapot) Wire(f *wire.Fault) {
	f.Status, f.Message = 418, fmt.Sprintf("I'm a teapot of %d cups", t.Cups)
}

func (Teapot) Failure(pe *provider.Error, _ fault.Met) { pe.Kind, pe.Status = provider.KindHTTP, 418 }
