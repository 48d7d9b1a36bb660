// Package errreport is seed 001's error report: what a person reads about a
// request the retry core gave up on, and the registry that keeps the last
// of them.
//
//   - Report is seed 001's ErrorReport: root cause (category, failure type,
//     status, provider, model, message, request ID), the caller's
//     StepContext, why retrying stopped, the recovery actions (each with
//     its priority and the command to run or the setting to change: the
//     next step) and the retry history. package retry builds it
//     (retry.NewReport, and retry.Retrier.Do when it gives up); this package
//     imports nothing of retry, so that the loop can build and keep
//     reports.
//   - Report.Render prints the seed's boxed UNRECOVERABLE ERROR (or RETRIES
//     EXHAUSTED) at the width and colour the caller gives; the library
//     never looks at the terminal itself (StyleFor does, when asked).
//     Report.Line is the one-line form for a log or a table.
//   - Report.Event is the report as an ErrorReport trace event; FromEvent
//     reads one back from any program's trace without trusting it: every
//     string bounded, made valid UTF-8, stripped of control characters and
//     of anything that looks like a key, every list bounded.
//   - ErrorRegistry keeps the last reports (100 by default) in one JSON file,
//     rewritten atomically under a file lock that other processes respect
//     too; ListErrors filters them (ErrorFilter), Resolve marks one
//     resolved. A file that cannot be read or written is a *RegistryError
//     naming the file, with a hint.
package errreport
