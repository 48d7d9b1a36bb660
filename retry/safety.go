package retry

import (
	"errors"
	"strings"
)

// Safety says whether an operation may be re-executed (seed 001, "Operation
// Safety & Idempotency Guard").
type Safety int

// Safety levels. The zero value is Safe.
const (
	// Safe operations (model requests, file reads, context loads) are always
	// retried when the policy says so.
	Safe Safety = iota
	// SafeAfterRollback operations (file writes and edits; Plandex's
	// "conditional") are retried; the caller rolls back before each retry.
	SafeAfterRollback
	// Irreversible operations (shell commands, external API writes, deploys)
	// are never retried unless Policy.AllowIrreversible is set.
	Irreversible
)

func (s Safety) String() string {
	switch s {
	case Safe:
		return "safe"
	case SafeAfterRollback:
		return "conditional"
	case Irreversible:
		return "irreversible"
	}
	return "unknown"
}

// ErrIrreversible is reported (inside an *ExhaustedError) when a failed
// irreversible operation is not retried.
var ErrIrreversible = errors.New("operation is irreversible; retry not permitted")

// ClassifyOperation maps a well-known operation type to its safety level:
// model requests, file reads and context loads are safe; file writes, edits,
// deletes and renames are conditional (SafeAfterRollback); shell commands,
// external API writes and deploys are irreversible. An unknown operation is
// irreversible: refusing a retry is the safe mistake.
func ClassifyOperation(op string) Safety {
	switch strings.ToLower(strings.TrimSpace(op)) {
	case "model_request", "llm_request", "provider_request", "model_call", "file_read", "read_file",
		"context_load", "load_context", "list_files", "search":
		return Safe
	case "file_write", "write_file", "file_edit", "edit_file", "file_delete", "delete_file",
		"file_rename", "rename_file", "file_create", "create_file":
		return SafeAfterRollback
	}
	return Irreversible
}
