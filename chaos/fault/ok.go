package fault

import (
	"unicode/utf8"

	"github.com/retrylab/retrylab/internal/wire"
	"github.com/retrylab/retrylab/internal/yamldiag"
)

// OK is a successful response. Text, when set, replaces the mock's
// assistant text: a valid, complete stream whose content the client's own
// validation may reject (seed 004 US-002, a logical failure). A nil Kind is
// ok too, with the mock's text.
type OK struct {
	Text string `yaml:"text"`
}

// MaxOKTextBytes bounds an ok fault's text.
const MaxOKTextBytes = 64 << 10

func init() { Register(Def{Kind: OK{}, Order: 80, Decode: decodeOK}) }

// decodeOK decodes an ok fault; its text is bounded, UTF-8.
func decodeOK(m *Mapping) Kind {
	var o *OK
	m.Decode("ok", &o)
	if o == nil {
		return nil
	}
	tn, path := yamldiag.Fields(m.Value("ok"))["text"], yamldiag.Join(m.Path("ok"), "text")
	switch {
	case len(o.Text) > MaxOKTextBytes:
		m.Errorf(tn, path, "a response text that fails validation needs a sentence, not a book", "text is %d bytes, over the %d-byte limit", len(o.Text), MaxOKTextBytes)
	case !utf8.ValidString(o.Text):
		m.Errorf(tn, path, "write the text as plain UTF-8", "text is not valid UTF-8")
	}
	return *o
}

func (OK) Name() string     { return "ok" }
func (OK) Describe() string { return "ok" }
func (OK) Completes() bool  { return true }

func (o OK) Wire(f *wire.Fault) { f.Text = o.Text }
