// Package metrics takes retrylab's trace figures to Prometheus: a Collector
// that counts, live, what `retrylab trace analyze` counts in trace files,
// and Rules, the recording and alerting rules that give, over a window, the
// same alert verdicts as analyze.
//
// The Collector is a trace.Observer: it counts the very events the retry
// core writes through a trace.Writer, so a program registers it with its
// Prometheus registry and with its Writer, and its counters agree with
// `trace analyze` of the trace file (TestCollectorMatchesAnalyze). Its
// metric names are those of `trace analyze --format openmetrics`, with
// provider and model labels where the events carry them. Label values come
// from events, which may hold anything: each label has a bounded number of
// distinct values (Options), the rest counted under "other".
//
// The package imports trace and client_golang; retry does not import it.
package metrics
