package scenario

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/chaos/fault"
	"go.yaml.in/yaml/v3"
)

// The loader's decisions, table-tested without files.

func scalarNode(t *testing.T, src string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte("v: "+src), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Content[0].Content[1]
}

func TestScalarValue(t *testing.T) {
	t.Parallel()
	str, i64, f64, b := reflect.TypeOf(""), reflect.TypeOf(int64(0)), reflect.TypeOf(0.0), reflect.TypeOf(false)
	tests := []struct {
		src     string
		t       reflect.Type
		want    any
		wantMsg string
	}{
		{"abc", str, "abc", ""},
		{"'3'", str, "3", ""},
		{"~", str, nil, "want a string, got nothing"},
		{"[a]", str, nil, "want a string, got a list"},
		{"3", i64, int64(3), ""},
		{"0x10", i64, int64(16), ""},
		{"-1", i64, nil, "must not be negative, got -1"},
		{"1.5", i64, nil, `want a whole number, got "1.5"`},
		{"0.25", f64, 0.25, ""},
		{".nan", f64, nil, `want a number, got ".nan"`},
		{"-0.5", f64, nil, "must not be negative, got -0.5"},
		{"{}", f64, nil, "want a number, got a mapping"},
		{"true", b, true, ""},
		{"maybe", b, nil, `want true or false, got "maybe"`},
		{"x", reflect.TypeOf(complex64(0)), nil, "cannot decode into complex64"},
	}
	for _, tt := range tests {
		t.Run(tt.src+" as "+tt.t.String(), func(t *testing.T) {
			got, bad := scalarValue(scalarNode(t, tt.src), tt.t)
			msg := ""
			if bad != nil {
				msg = bad.msg
			}
			if got != tt.want || msg != tt.wantMsg {
				t.Errorf("scalarValue() = %v, %q; want %v, %q", got, msg, tt.want, tt.wantMsg)
			}
		})
	}
}

func TestParseScenarioDuration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in       string
		want     time.Duration
		wantMsg  string
		wantHint string
	}{
		{"2s", 2 * time.Second, "", ""},
		{"1m30s", 90 * time.Second, "", ""},
		{"24h", 24 * time.Hour, "", ""},
		{"25h", 0, `duration "25h" is too long`, "durations go up to 24h"},
		{"99999999999h", 0, `duration "99999999999h" is too long`, "durations go up to 24h"},
		{"-1s", 0, `negative duration "-1s"`, "durations must be 0 or more"},
		{"2", 0, `bad duration "2"`, "add a unit: 2s or 2ms"},
		{"soon", 0, `bad duration "soon"`, "write a duration such as 2s, 300ms or 1m30s"},
	}
	for _, tt := range tests {
		got, msg, hint := parseDuration(tt.in)
		if got != tt.want || msg != tt.wantMsg || hint != tt.wantHint {
			t.Errorf("parseDuration(%q) = %v, %q, %q; want %v, %q, %q", tt.in, got, msg, hint, tt.want, tt.wantMsg, tt.wantHint)
		}
	}
}

func TestNameHint(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", MaxNameLen+1)
	tests := []struct {
		name    string
		written bool
		want    string
	}{
		{"a/b", true, "use letters, digits and dashes"},
		{"a/b", false, "use letters, digits and dashes; the name comes from the file name: rename the file or add name:"},
		{long, true, "shorten it to 100 bytes at most (it names the run folder); say more in description"},
	}
	for _, tt := range tests {
		if got := nameHint(tt.name, tt.written); got != tt.want {
			t.Errorf("nameHint(%.10q, %v) = %q, want %q", tt.name, tt.written, got, tt.want)
		}
	}
}

func TestApplyDefaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   Scenario
		want Scenario
	}{
		{"nothing given", Scenario{}, Scenario{Provider: "anthropic", Model: DefaultAnthropicModel, Requests: 1, TimeScale: 1}},
		{"openai's model", Scenario{Provider: "openai"}, Scenario{Provider: "openai", Model: DefaultOpenAIModel, Requests: 1, TimeScale: 1}},
		{"given values stay", Scenario{Provider: "openai", Model: "m", Requests: 3, TimeScale: 0.5}, Scenario{Provider: "openai", Model: "m", Requests: 3, TimeScale: 0.5}},
	}
	for _, tt := range tests {
		sc := tt.in
		applyDefaults(&sc)
		if diff := cmp.Diff(tt.want, sc, cmp.AllowUnexported(ClientPolicy{})); diff != "" {
			t.Errorf("%s: applyDefaults() mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestFaultKindOrder(t *testing.T) {
	t.Parallel()
	// The order of kinds and keys is the order of load messages and hints.
	want := []string{"status", "sseError", "drop", "hang", "reset", "latency", "toxics", "ok"}
	if diff := cmp.Diff(want, fault.Names()[:len(want)]); diff != "" {
		t.Errorf("fault.Names() mismatch (-want +got):\n%s", diff)
	}
}

func TestClientPolicyDecodedOnce(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, policy, want string
	}{
		{"preset", "policy: plandex", "plandex"},
		{"inline", "policy: {preset: forgeflare, name: mine}", "mine"},
		{"none: the provider's SDK preset", "timeout: 5s", "anthropic-sdk"},
	} {
		sc, err := ParseScenario("p.yaml", []byte("client:\n  "+tt.policy+"\n"))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		p1, err1 := PolicyFor(sc)
		p2, err2 := PolicyFor(sc)
		if err1 != nil || err2 != nil || p1.Name != tt.want {
			t.Fatalf("%s: policyFor = %v, %v; want %s", tt.name, p1, err1, tt.want)
		}
		if tt.want != "anthropic-sdk" && p1 != p2 {
			t.Errorf("%s: policyFor decoded the policy again", tt.name)
		}
		if _, ok := policyFile(sc); ok {
			t.Errorf("%s: policyPath names a file", tt.name)
		}
	}
	sc := &Scenario{Provider: "openai"}
	if err := sc.Client.Policy.Encode("forgeflare"); err != nil {
		t.Fatal(err)
	}
	if p, err := PolicyFor(sc); err != nil || p.Name != "forgeflare" {
		t.Errorf("after Encode: %v, %v", p, err)
	}
	if err := sc.Client.Policy.Encode("nope"); err == nil || !strings.Contains(err.Error(), `unknown preset "nope"`) {
		t.Errorf("Encode(nope) = %v", err)
	}
}

// TestLoadErrorsBounded: a scenario with a great many problems keeps the
// first yamldiag.DefaultMax and counts the rest.
func TestLoadErrorsBounded(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 500 {
		fmt.Fprintf(&b, "bad%d: 1\n", i)
	}
	_, err := ParseScenario("many.yaml", []byte(b.String()))
	var le LoadErrors
	if !errors.As(err, &le) || len(le) != 101 {
		t.Fatalf("got %d problems (%T), want 100 and a count", len(le), err)
	}
	if got, want := le[100].Error(), "many.yaml: 400 more problems not shown"; got != want {
		t.Errorf("last problem = %q, want %q", got, want)
	}
	if le[0].Line != 1 || le[99].Line != 100 {
		t.Errorf("kept problems are not the first ones: lines %d..%d", le[0].Line, le[99].Line)
	}
}
