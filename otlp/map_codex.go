package otlp

import (
	"slices"
	"strings"
)

// codex reads Codex CLI's events: a codex.api_request log event per HTTP
// try (codex-rs/otel, SessionTelemetry::record_api_request), with attempt,
// duration_ms, http.response.status_code (absent when no response) and
// error.message; model comes with the session's metadata. Tries of other
// endpoints than the model's (the model list) are not attempts.
type codex struct{}

var _ Mapping = codex{}

func (codex) Name() string { return "codex" }

func (codex) Map(t Telemetry) ([]Request, int) {
	var ats []Attempt
	var models []string
	for _, r := range t.records() {
		if r.eventName() != "codex.api_request" {
			continue
		}
		a := r.Attributes()
		if ep := str(a, "endpoint"); strings.Contains(ep, "models") {
			continue
		}
		end := r.when()
		d, _ := num(a, "duration_ms")
		ats = append(ats, Attempt{N: nth(a, "attempt"), Start: end.Add(-ms(d)), End: end,
			Status: status(a, "http.response.status_code"), Error: str(a, "error.message")})
		models = append(models, str(a, "model", "slug"))
	}
	idx := make([]int, len(ats))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(i, j int) int { return ats[i].End.Compare(ats[j].End) })
	sorted, sortedModels := make([]Attempt, len(ats)), make([]string, len(ats))
	for k, i := range idx {
		sorted[k], sortedModels[k] = ats[i], models[i]
	}
	return splitByNumber("openai", "", sorted, sortedModels), len(ats)
}
