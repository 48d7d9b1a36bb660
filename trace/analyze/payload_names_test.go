package analyze

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/retrylab/retrylab/trace"
)

// TestPayloadMembersAreEventFields holds the payload readers (payload.go)
// to the event types of the trace format (trace/event.go): every member
// name a reader matches is a JSON field of the type its events are written
// as. The readers match names by hand, as switches, because that is the
// analyzer's hot loop (a table of readers cost 5.8% more instructions);
// this test is what keeps the names from drifting apart.
func TestPayloadMembersAreEventFields(t *testing.T) {
	types := map[string]any{
		"memberRequestFinished":    trace.ProviderRequestFinished{},
		"memberRetryAttempt":       trace.RetryAttempt{},
		"memberRunEscalated":       trace.RunEscalated{},
		"memberRetryDecision":      trace.RetryDecision{},
		"memberTicketTransition":   trace.TicketTransition{},
		"memberErrorReport":        trace.ErrorReport{},
		"memberEscalationDeclined": trace.EscalationDeclined{},
	}
	f, err := parser.ParseFile(token.NewFileSet(), "payload.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv == nil || !strings.HasPrefix(fn.Name.Name, "member") {
			continue
		}
		typ, ok := types[fn.Name.Name]
		if !ok {
			continue // a seed event with no type of its own in event.go
		}
		seen[fn.Name.Name] = true
		fields := jsonFields(reflect.TypeOf(typ))
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			name, _ := strconv.Unquote(lit.Value)
			if !fields[name] {
				t.Errorf("%s reads member %q, which %T does not have (its fields: %v)", fn.Name.Name, name, typ, keys(fields))
			}
			return true
		})
	}
	for name := range types {
		if !seen[name] {
			t.Errorf("payload.go has no reader %s", name)
		}
	}
}

// jsonFields returns the JSON names of t's fields.
func jsonFields(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out[name] = true
		}
	}
	return out
}

func keys(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }
