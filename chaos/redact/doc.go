// Package redact keeps the API keys out of every run file: learn.go finds
// the keys a client sent (headers, query, JSON body); redact.go scrubs them,
// and whatever looks like a key, from the client's output, its trace and
// every file of the run folder, as they are written and again at the end.
package redact
