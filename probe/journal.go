package probe

import (
	"encoding/json"
	"fmt"

	"github.com/retrylab/retrylab/internal/regfile"
)

// Journal is what a probe measured, as `chaos probe --observations FILE`
// writes it (and `retrylab matrix` beside each client's run folders): the
// wire format probed and every observation the profile was inferred from,
// in the order the probe made them. Infer(provider, observations) gives
// the profile's inference again, without running the client
// (TestMeasuredAgents holds the measured agents' journals to their source).
// It holds figures and short notes only: the client's stderr tail, already
// redacted by chaos, is the one text that came from the client.
type Journal struct {
	Provider     string        `json:"provider"`
	Observations []Observation `json:"observations"`
}

// MaxJournalBytes bounds a journal read back (a full battery with its
// ceiling rounds and survival checks is about 10 KB).
const MaxJournalBytes = 16 << 20

// Marshal is the journal as one line of JSON and a newline, the form of
// probe/testdata/agents/*.json. Figures JSON cannot hold (NaN, ±Inf) are
// written as Infer reads them (degenerate.go): a wait or a noise figure
// clamped to [0, maxWaitMs] (NaN is 0), an arrival or a date's lead 0; so
// the journal infers what the observations did, and one bad figure does not
// lose the whole journal.
func (j Journal) Marshal() ([]byte, error) {
	obs := make([]Observation, len(j.Observations))
	for i, o := range j.Observations {
		o.WaitsMs, o.WaitNoiseMs = mapMs(o.WaitsMs, clampMs), mapMs(o.WaitNoiseMs, clampMs)
		o.ArrivalsMs = mapMs(o.ArrivalsMs, finiteOr0)
		o.NoiseMs, o.DateLeadMs = clampMs(o.NoiseMs), finiteOr0(o.DateLeadMs)
		obs[i] = o
	}
	j.Observations = obs
	b, err := json.Marshal(j)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// mapMs is f of each figure, in a new slice (nil stays nil).
func mapMs(xs []float64, f func(float64) float64) []float64 {
	if xs == nil {
		return nil
	}
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

func finiteOr0(x float64) float64 {
	if !finite(x) {
		return 0
	}
	return x
}

// ParseJournal reads a journal and looks its provider up.
func ParseJournal(data []byte) (Provider, []Observation, error) {
	var j Journal
	if err := json.Unmarshal(data, &j); err != nil {
		return Provider{}, nil, fmt.Errorf("not a probe journal: %w", err)
	}
	prov, err := LookupProvider(j.Provider)
	if err != nil {
		return Provider{}, nil, fmt.Errorf("probe journal: %w", err)
	}
	return prov, j.Observations, nil
}

// LoadJournal reads the journal at path (a regular file of at most
// MaxJournalBytes).
func LoadJournal(path string) (Provider, []Observation, error) {
	data, err := regfile.ReadFile(path, MaxJournalBytes)
	if err != nil {
		return Provider{}, nil, err
	}
	prov, obs, err := ParseJournal(data)
	if err != nil {
		return Provider{}, nil, fmt.Errorf("%s: %w", path, err)
	}
	return prov, obs, nil
}
