package retry

import (
	"slices"
	"strings"

	"github.com/retrylab/retrylab/retry/errreport"
)

// typeActions are the actions per failure type. The non-retryable rows are
// seed 001's "Required User Action" table, with its commands; quota_exhausted
// follows walkthrough 2 (add credits, switch provider) plus the table's
// "upgrade plan". Commands are Plandex's, as the seed gives them; settings
// are retrylab's policy keys and Plandex's environment variables.
var typeActions = map[FailureType][]errreport.Action{
	AuthInvalid:      {act(errreport.PriorityCritical, "Fix API credentials", "plandex api-keys", "")},
	PermissionDenied: {act(errreport.PriorityCritical, "Request access in provider console", "", "")},
	ContextTooLong: {
		act(errreport.PriorityCritical, "Reduce context", "plandex context rm <file>", ""),
		act(errreport.PriorityHigh, "Or switch to a model with a larger context window", "", "client.fallback.largeContext"),
	},
	InvalidRequest: {act(errreport.PriorityCritical, "Fix request format", "", "")},
	ContentPolicy:  {act(errreport.PriorityCritical, "Modify prompt", "", "")},
	QuotaExhausted: {
		act(errreport.PriorityCritical, "Add credits to your account", "", ""),
		act(errreport.PriorityHigh, "Switch to a different provider", "plandex providers switch <provider>", ""),
		act(errreport.PriorityMedium, "Upgrade your plan", "", ""),
	},
	ModelNotFound:      {act(errreport.PriorityCritical, "Use a valid model ID", "", "")},
	ModelDeprecated:    {act(errreport.PriorityCritical, "Migrate to a newer model", "", "")},
	UnsupportedFeature: {act(errreport.PriorityCritical, "Change approach", "", "")},
	AccountSuspended:   {act(errreport.PriorityCritical, "Contact provider", "", "")},
	BillingError: {
		act(errreport.PriorityCritical, "Check the billing and payment details in the provider console", "", ""),
		act(errreport.PriorityHigh, "Retry once the payment has gone through", "", "failureTypes.billing_error.retry"),
	},
	Conflict:     {act(errreport.PriorityHigh, "Check for a concurrent change to the same resource, then retry", "", "statusRetry: {409: true}")},
	NetworkError: {act(errreport.PriorityCritical, "Fix the base URL, DNS or TLS set-up: waiting does not cure this", "", "")},
	StreamParse:  {act(errreport.PriorityHigh, "The provider sent a malformed stream; report it with the request ID", "", "")},
	CacheError: {
		act(errreport.PriorityHigh, "Send the request without prompt-cache parameters (cache_control, prompt_cache_*)", "", ""),
	},
	LogicalFailure: {
		act(errreport.PriorityHigh, "Make the prompt say what the validation wants, or relax the validation", "", ""),
		act(errreport.PriorityMedium, "Allow more retries with error context", "", "failureTypes.logical_failure.maxAttempts"),
	},
	Unknown: {act(errreport.PriorityHigh, "Read the error message; retry it only if it is transient", "", "failureTypes.unknown.retry")},
}

// act is a recovery action: what to do, how urgent, and the command to run
// or the setting to change ("" when there is none).
func act(priority, text, command, setting string) errreport.Action {
	return errreport.Action{Priority: priority, Text: text, Command: command, Setting: setting}
}

// transientActions are the actions for a retryable failure that persisted.
func transientActions(ft FailureType) []errreport.Action {
	return []errreport.Action{
		act(errreport.PriorityHigh, "Wait and retry later, or allow more attempts", "", "failureTypes."+string(ft)+".maxAttempts"),
		act(errreport.PriorityMedium, "Configure a fallback model or provider", "", "client.fallback"),
	}
}

// reasonActions are the actions that come first when a limit, not the
// failure itself, stopped the retries.
var reasonActions = map[string][]errreport.Action{
	ReasonRetryAfterCeiling: {act(errreport.PriorityCritical, "The provider asked for a longer wait than allowed: wait, or raise the ceiling", "",
		"retryAfter.ceiling, PLANDEX_MAX_PROVIDER_RETRY_AFTER_MS")},
	ReasonMaxElapsed:      {act(errreport.PriorityHigh, "Allow the request more time", "", "maxElapsed")},
	ReasonBudgetExhausted: {act(errreport.PriorityHigh, "Too many retries across the process: wait for the failure rate to drop", "", "")},
	ReasonThrottled: {act(errreport.PriorityHigh, "The provider refuses most requests: adaptive throttling held this retry back; wait for it to recover", "",
		"adaptiveThrottling")},
	ReasonTopOfLadder: {act(errreport.PriorityHigh, "Already at the most capable model: split the task, or add a model to the ladder", "",
		"client.escalation, escalation.ladder")},
	ReasonEscalationDeclined: {act(errreport.PriorityHigh, "Approve the switch of model, or raise the escalation cost cap", "", "escalation.maxCost")},
	ErrIrreversible.Error(): {act(errreport.PriorityCritical, "Retry an irreversible operation only if repeating it is safe", "",
		"PLANDEX_RETRY_IRREVERSIBLE=true, allowIrreversible: true")},
}

// RecoveryFor returns the recovery actions for a request that failed with ft
// and stopped for reason: the reason's actions first (a ceiling, a limit,
// the escalation guard), then the failure type's (seed 001's table for the
// non-retryable types; "retry later, allow more attempts, configure a
// fallback" for a retryable type that persisted). A rollback that failed
// comes first of all.
func RecoveryFor(ft FailureType, reason string) []errreport.Action {
	var out []errreport.Action
	if strings.HasPrefix(reason, "rollback failed") {
		out = append(out, act(errreport.PriorityCritical, "Restore the files by hand: the rollback before the retry failed", "", ""))
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
