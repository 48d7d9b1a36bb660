package provider

import "regexp"

var secretRE = regexp.MustCompile(`sk-[A-Za-z0-9_\-]{4,}`)

// redact removes anything that looks like an API key from s.
func redact(s string) string { return secretRE.ReplaceAllString(s, "sk-***") }

// Redact removes anything that looks like an API key (sk-...) from s.
func Redact(s string) string { return redact(s) }
