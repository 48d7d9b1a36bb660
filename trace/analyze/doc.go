// Package analyze computes retrylab's analysis of traces (DESIGN.md's
// analysis contract, schema retrylab.analysis/v1; docs/analyze.md): Run
// reads the trace files trace.Discover found in one streaming pass each,
// in parallel, and returns the Analysis — request, attempt and escalation
// figures, groups, the seed's metrics, alerts and issue 9's orchestrator,
// recovery, ticket and error-message figures. Compare sets two analyses
// side by side (`retrylab trace compare`).
//
// # Layout, in the order the data flows
//
//   - run.go: Run and its Options. engine.go: the parallel chunk engine,
//     files cut into line-aligned chunks (trace.OpenChunk), one worker's
//     acc per goroutine, malformed lines put back in file order.
//   - payload.go: the payload members each event type's figures read, as
//     the trace.Reader hands them over during its one scan of the line
//     (trace.Reader.ReadMembers), decoded with trace/internal/jsonval.
//   - acc.go, extra.go: accumulation, with interned labels and capped
//     counts (the rest under Other*), and the merge of the workers' accs;
//     result.go: the Analysis of the merged acc.
//   - contract.go: the Analysis type, field for field the JSON contract;
//     registry.go: the metrics, one Registry entry each, read by alerts,
//     renderers and the CLI's help.
//   - alerts.go, bounds.go: alerts and their exact (Clopper–Pearson) gate;
//     compare.go: Compare; normalize.go: NormalizeMessage, the template of
//     an error message.
//
// Keep what is good: EvaluateAlerts, ExactBounds, CriticalCount and
// Compare are pure decisions on an Analysis, tested without a trace; the
// metric registry and the groupings reject an unknown name with the list
// of known ones; an alerts file's problems are reported all at once, each
// as file:line: field with a Hint giving the next step; memory stays
// bounded whatever the input (labels, distinct counts and listed ids are
// capped, the sketch behind the percentiles is of fixed size).
package analyze
