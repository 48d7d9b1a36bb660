package retry

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Plandex's environment variables (seed 001, "Retry Policy Configuration").
const (
	EnvMaxRetryAttempts        = "PLANDEX_MAX_RETRY_ATTEMPTS"
	EnvMaxRetryDelayMs         = "PLANDEX_MAX_RETRY_DELAY_MS"
	EnvMaxProviderRetryAfterMs = "PLANDEX_MAX_PROVIDER_RETRY_AFTER_MS"
	EnvRetryIrreversible       = "PLANDEX_RETRY_IRREVERSIBLE"
	maxEnvMs                   = int64(24 * time.Hour / time.Millisecond)
	envMsHint                  = "set it to a whole number of milliseconds, e.g. 10000, or 0 for no cap"
)

// EnvError is a bad value of one of Plandex's environment variables.
type EnvError struct {
	Var, Value string
	Msg        string
	Help       string
}

func (e *EnvError) Error() string { return fmt.Sprintf("%s=%q: %s", e.Var, e.Value, e.Msg) }

// Hint says what to do next.
func (e *EnvError) Hint() string { return e.Help }

// FromEnv returns a copy of p with Plandex's environment variables applied,
// read once through getenv (os.Getenv, or a fake); an unset or empty
// variable changes nothing. The retry loop never reads the environment: a
// caller that wants these variables honoured calls FromEnv, once.
//
//	PLANDEX_MAX_RETRY_ATTEMPTS           global cap on attempts (Policy.MaxAttempts); 0: none
//	PLANDEX_MAX_RETRY_DELAY_MS           global cap on every wait (Policy.MaxDelay); 0: none
//	PLANDEX_MAX_PROVIDER_RETRY_AFTER_MS  a Retry-After above it is not retried
//	                                     (RetryAfter.Ceiling; the plandex preset's 10000); 0: no ceiling
//	PLANDEX_RETRY_IRREVERSIBLE           true: retry irreversible operations (AllowIrreversible)
//
// A value that is not a whole number in range, or not a boolean, is an
// *EnvError naming the variable, with a hint.
func FromEnv(p *Policy, getenv func(string) string) (*Policy, error) {
	q := p.Clone()
	if v, ok, err := envInt(getenv, EnvMaxRetryAttempts, 1000, "set it to a whole number of attempts, e.g. 3, or 0 for no cap"); err != nil {
		return nil, err
	} else if ok {
		q.MaxAttempts = int(v)
	}
	if v, ok, err := envInt(getenv, EnvMaxRetryDelayMs, maxEnvMs, envMsHint); err != nil {
		return nil, err
	} else if ok {
		q.MaxDelay = time.Duration(v) * time.Millisecond
	}
	if v, ok, err := envInt(getenv, EnvMaxProviderRetryAfterMs, maxEnvMs, "set it to a whole number of milliseconds, e.g. 10000, or 0 for no ceiling"); err != nil {
		return nil, err
	} else if ok {
		q.RetryAfter.Ceiling = time.Duration(v) * time.Millisecond
	}
	if s := strings.TrimSpace(getenv(EnvRetryIrreversible)); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, &EnvError{Var: EnvRetryIrreversible, Value: s, Msg: "not a boolean",
				Help: "set it to true to allow retrying irreversible operations, or false"}
		}
		q.AllowIrreversible = b
	}
	return q, nil
}

// envInt reads a whole number in [0, limit]; ok is false when unset.
func envInt(getenv func(string) string, name string, limit int64, hint string) (v int64, ok bool, err error) {
	s := strings.TrimSpace(getenv(name))
	if s == "" {
		return 0, false, nil
	}
	v, perr := strconv.ParseInt(s, 10, 64)
	switch {
	case perr != nil:
		return 0, false, &EnvError{Var: name, Value: s, Msg: "not a whole number", Help: hint}
	case v < 0:
		return 0, false, &EnvError{Var: name, Value: s, Msg: "negative", Help: hint}
	case v > limit:
		return 0, false, &EnvError{Var: name, Value: s, Msg: fmt.Sprintf("above the largest value accepted, %d", limit), Help: hint}
	}
	return v, true, nil
}
