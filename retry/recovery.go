package retry

import (
	"slices"
	"strings"
)

// Action is one recovery action of a Report: what to do, how urgent, and
// the command to run or the setting to change, when there is one.
type Action struct {
	Priority string `json:"priority"` // critical, high, medium, low
	Text     string `json:"text"`
	Command  string `json:"command,omitempty"`
	Setting  string `json:"setting,omitempty"`
}

// Action priorities.
const (
	PriorityCritical = "critical"
	PriorityHigh     = "high"
	PriorityMedium   = "medium"
	PriorityLow      = "low"
)

// typeActions are the actions per failure type. The non-retryable rows are
// seed 001's "Required User Action" table, with its commands; quota_exhausted
// follows walkthrough 2 (add credits, switch provider) plus the table's
// "upgrade plan". Commands are Plandex's, as the seed gives them; settings
// are retrylab's policy keys and Plandex's environment variables.
var typeActions = map[FailureType][]Action{
	AuthInvalid:      {{PriorityCritical, "Fix API credentials", "plandex api-keys", ""}},
	PermissionDenied: {{PriorityCritical, "Request access in provider console", "", ""}},
	ContextTooLong: {
		{PriorityCritical, "Reduce context", "plandex context rm <file>", ""},
		{PriorityHigh, "Or switch to a model with a larger context window", "", "client.fallback.largeContext"},
	},
	InvalidRequest: {{PriorityCritical, "Fix request format", "", ""}},
	ContentPolicy:  {{PriorityCritical, "Modify prompt", "", ""}},
	QuotaExhausted: {
		{PriorityCritical, "Add credits to your account", "", ""},
		{PriorityHigh, "Switch to a different provider", "plandex providers switch <provider>", ""},
		{PriorityMedium, "Upgrade your plan", "", ""},
	},
	ModelNotFound:      {{PriorityCritical, "Use a valid model ID", "", ""}},
	ModelDeprecated:    {{PriorityCritical, "Migrate to a newer model", "", ""}},
	UnsupportedFeature: {{PriorityCritical, "Change approach", "", ""}},
	AccountSuspended:   {{PriorityCritical, "Contact provider", "", ""}},
	BillingError: {
		{PriorityCritical, "Check the billing and payment details in the provider console", "", ""},
		{PriorityHigh, "Retry once the payment has gone through", "", "failureTypes.billing_error.retry"},
	},
	Conflict:     {{PriorityHigh, "Check for a concurrent change to the same resource, then retry", "", "statusRetry: {409: true}"}},
	NetworkError: {{PriorityCritical, "Fix the base URL, DNS or TLS set-up: waiting does not cure this", "", ""}},
	StreamParse:  {{PriorityHigh, "The provider sent a malformed stream; report it with the request ID", "", ""}},
	CacheError: {
		{PriorityHigh, "Send the request without prompt-cache parameters (cache_control, prompt_cache_*)", "", ""},
	},
	LogicalFailure: {
		{PriorityHigh, "Make the prompt say what the validation wants, or relax the validation", "", ""},
		{PriorityMedium, "Allow more retries with error context", "", "failureTypes.logical_failure.maxAttempts"},
	},
	Unknown: {{PriorityHigh, "Read the error message; retry it only if it is transient", "", "failureTypes.unknown.retry"}},
}

// transientActions are the actions for a retryable failure that persisted.
func transientActions(ft FailureType) []Action {
	return []Action{
		{PriorityHigh, "Wait and retry later, or allow more attempts", "", "failureTypes." + string(ft) + ".maxAttempts"},
		{PriorityMedium, "Configure a fallback model or provider", "", "client.fallback"},
	}
}

// reasonActions are the actions that come first when a limit, not the
// failure itself, stopped the retries.
var reasonActions = map[string][]Action{
	ReasonRetryAfterCeiling: {{PriorityCritical, "The provider asked for a longer wait than allowed: wait, or raise the ceiling", "",
		"retryAfter.ceiling, PLANDEX_MAX_PROVIDER_RETRY_AFTER_MS"}},
	ReasonMaxElapsed:      {{PriorityHigh, "Allow the request more time", "", "maxElapsed"}},
	ReasonBudgetExhausted: {{PriorityHigh, "Too many retries across the process: wait for the failure rate to drop", "", ""}},
	ReasonTopOfLadder: {{PriorityHigh, "Already at the most capable model: split the task, or add a model to the ladder", "",
		"client.escalation, escalation.ladder"}},
	ReasonEscalationDeclined: {{PriorityHigh, "Approve the switch of model, or raise the escalation cost cap", "", "escalation.maxCost"}},
	ErrIrreversible.Error(): {{PriorityCritical, "Retry an irreversible operation only if repeating it is safe", "",
		"PLANDEX_RETRY_IRREVERSIBLE=true, allowIrreversible: true"}},
}

// RecoveryFor returns the recovery actions for a request that failed with ft
// and stopped for reason: the reason's actions first (a ceiling, a limit,
// the escalation guard), then the failure type's (seed 001's table for the
// non-retryable types; "retry later, allow more attempts, configure a
// fallback" for a retryable type that persisted). A rollback that failed
// comes first of all.
func RecoveryFor(ft FailureType, reason string) []Action {
	var out []Action
	if strings.HasPrefix(reason, "rollback failed") {
		out = append(out, Action{PriorityCritical, "Restore the files by hand: the rollback before the retry failed", "", ""})
	}
	out = append(out, reasonActions[reason]...)
	if acts, ok := typeActions[ft]; ok {
		return append(out, acts...)
	}
	if ClassOf(ft) == Retryable {
		return append(out, transientActions(ft)...)
	}
	return slices.Clip(out)
}
