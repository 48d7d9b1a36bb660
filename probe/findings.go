package probe

// Finding is a finding one probe experiment's run raised (chaos/verify's
// detectors over its journal, docs/chaos.md "Findings"): its code, the
// server attempts of that run it rests on, the evidence, and Probe, the
// experiment (the probe scenario's name, its run folder's name).
type Finding struct {
	Code     string `json:"code"`
	Attempts []int  `json:"attempts"`
	Evidence string `json:"evidence"`
	Probe    string `json:"probe"`
}

// FindingGroup is the findings of one code, for the renderers: how many
// experiments raised it, the first one's evidence, and the experiments.
type FindingGroup struct {
	Code     string
	Evidence string // the first experiment's
	Probes   []string
}

// GroupFindings groups fs by code, in the order each code first appears;
// an experiment is named once per code.
func GroupFindings(fs []Finding) []FindingGroup {
	var out []FindingGroup
	at := map[string]int{}
	for _, f := range fs {
		i, ok := at[f.Code]
		if !ok {
			i = len(out)
			at[f.Code] = i
			out = append(out, FindingGroup{Code: f.Code, Evidence: f.Evidence})
		}
		g := &out[i]
		if n := len(g.Probes); n == 0 || g.Probes[n-1] != f.Probe {
			g.Probes = append(g.Probes, f.Probe)
		}
	}
	return out
}
