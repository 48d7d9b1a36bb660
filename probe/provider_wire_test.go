package probe

import (
	"slices"
	"testing"

	"github.com/retrylab/retrylab/internal/wire"
)

// TestEveryWireFormatHasABattery holds the probe's batteries to the mock's
// wire formats: a format added to internal/wire without its battery here
// fails, and so does a battery for a format the mock does not speak.
func TestEveryWireFormatHasABattery(t *testing.T) {
	if got, want := ProviderNames(), wire.Names(); !slices.Equal(got, want) {
		t.Fatalf("probe batteries %v, wire formats %v: register one battery per format (provider.go)", got, want)
	}
	for _, name := range wire.Names() {
		p, _ := LookupProvider(name)
		for _, f := range append(p.Faults, p.Exhaust) {
			if f.Err.Provider != name {
				t.Errorf("%s: fault %q is classified as %q's", name, f.Name, f.Err.Provider)
			}
		}
	}
}
