package matrix

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/retrylab/retrylab/probe"
)

func loadFixture(t testing.TB) *probe.Profile {
	t.Helper()
	p, err := probe.LoadProfile("../probe/testdata/anthropic-node.profile.json")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// clone copies a profile through its JSON, as a matrix read back has it.
func clone(t testing.TB, p *probe.Profile) *probe.Profile {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var out probe.Profile
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

func setRetried(p *probe.Profile, fault string, v bool) {
	for i := range p.Faults {
		if p.Faults[i].Fault == fault && p.Faults[i].Sample == 0 {
			p.Faults[i].Retried = &v
		}
	}
}

func TestDrift(t *testing.T) {
	base := loadFixture(t)
	cases := []struct {
		name    string
		version string
		edit    func(p *probe.Profile)
		want    []string // column: before → after
	}{
		{"nothing", "1", func(*probe.Profile) {}, nil},
		{"version alone", "2", func(*probe.Profile) {}, []string{"version: 1 → 2"}},
		{"stops honouring Retry-After seconds", "1", func(p *probe.Profile) {
			p.Policy.RetryAfter.Seconds = ptr(false)
		}, []string{"retryAfter.seconds: yes → no"}},
		{"more retries", "1", func(p *probe.Profile) {
			p.Policy.MaxRetries = ptr(5)
			p.Policy.Backoff.InitialMs = ptr(1000.0)
		}, []string{"maxRetries: 2 → 5", "backoff.initialMs: 500 → 1000"}},
		{"a figure becomes unknown", "1", func(p *probe.Profile) {
			p.Policy.MaxRetries = nil
			delete(p.Confidence, "policy.maxRetries")
			p.Inconclusive = append(p.Inconclusive, probe.Inconclusive{Figure: "policy.maxRetries", Reason: "at least 10: still retrying"})
		}, []string{"maxRetries: 2 → unknown"}},
		{"retries 400 now, 4xx partly", "1", func(p *probe.Profile) {
			setRetried(p, "400", true)
		}, []string{"retried.4xx: no → only 400"}},
		{"a finding appears", "1", func(p *probe.Profile) {
			p.Findings = []probe.Finding{{Code: "no_jitter", Probe: "probe-exhaust-1", Evidence: "waits alike"}}
		}, []string{"findings: none → no_jitter"}},
		{"survives a little longer: noise", "1", func(p *probe.Profile) {
			p.Policy.SurvivesOutageMs["529"].Ms = 1350
		}, nil},
		{"survives longer", "1", func(p *probe.Profile) {
			p.Policy.SurvivesOutageMs["529"].Ms = 9000
		}, []string{"survivesOutageMs.overload: 1276 → 9000"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			old := &Matrix{Schema: Schema, Clients: []Entry{{Name: "x", Version: "1", Provider: "anthropic", Profile: clone(t, base)}}}
			p := clone(t, base)
			c.edit(p)
			m := &Matrix{Schema: Schema, Clients: []Entry{{Name: "x", Version: c.version, Provider: "anthropic", Profile: p}}}
			Diff(old, m)
			var got []string
			for _, ch := range m.Clients[0].Changes {
				got = append(got, ch.Column+": "+ch.Before+" → "+ch.After)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("changes %q, want %q", got, c.want)
			}
		})
	}
}

func TestDriftClients(t *testing.T) {
	p := loadFixture(t)
	old := &Matrix{Schema: Schema, Clients: []Entry{{Name: "gone", Version: "1", Profile: p}, {Name: "kept", Version: "1", Profile: p}}}
	m := &Matrix{Schema: Schema, Clients: []Entry{{Name: "kept", Version: "1", Profile: p}, {Name: "new", Version: "3", Profile: p}}}
	removed := Diff(old, m)
	if !reflect.DeepEqual(removed, []string{"gone"}) {
		t.Errorf("removed %q", removed)
	}
	if len(m.Clients[0].Changes) != 0 {
		t.Errorf("kept: %v", m.Clients[0].Changes)
	}
	if ch := m.Clients[1].Changes; len(ch) != 1 || ch[0].Column != "client" || ch[0].Before != "absent" {
		t.Errorf("new: %v", ch)
	}
}

func ptr[T any](v T) *T { return &v }

func TestRules(t *testing.T) {
	n := func(f float64) *float64 { return &f }
	cases := []struct {
		rule  string
		ch    Change
		fires bool
	}{
		{"retryAfter.seconds", Change{Column: "retryAfter.seconds", Before: "yes", After: "no"}, true},
		{"retryAfter.seconds", Change{Column: "retryAfter.ms", Before: "yes", After: "no"}, false},
		{"retryAfter.*", Change{Column: "retryAfter.ms", Before: "yes", After: "no"}, true},
		{"retryAfter.seconds=no", Change{Column: "retryAfter.seconds", Before: "yes", After: "no"}, true},
		{"retryAfter.seconds=no", Change{Column: "retryAfter.seconds", Before: "no", After: "yes"}, false},
		{"maxRetries>1", Change{Column: "maxRetries", Before: "1", After: "3", BeforeNum: n(1), AfterNum: n(3)}, true},
		{"maxRetries>1", Change{Column: "maxRetries", Before: "2", After: "3", BeforeNum: n(2), AfterNum: n(3)}, false},
		{"maxRetries>1", Change{Column: "maxRetries", Before: "3", After: "1", BeforeNum: n(3), AfterNum: n(1)}, false},
		{"maxRetries<2", Change{Column: "maxRetries", Before: "3", After: "1", BeforeNum: n(3), AfterNum: n(1)}, true},
		{"maxRetries<=1", Change{Column: "maxRetries", Before: "3", After: "unknown", BeforeNum: n(3)}, false},
		{"maxRetries>=10", Change{Column: "maxRetries", Before: "unknown", After: "10", AfterNum: n(10)}, true},
		{"backoff.initialMs<500", Change{Column: "backoff.initialMs", Before: "500", After: "100", BeforeNum: n(500), AfterNum: n(100)}, true},
		{"version", Change{Column: "version", Before: "1", After: "2"}, true},
		{"client", Change{Column: "client", Before: "absent", After: "2"}, true},
	}
	for _, c := range cases {
		rs, err := ParseRules(c.rule)
		if err != nil {
			t.Fatalf("%s: %v", c.rule, err)
		}
		if got := rs[0].Fires(c.ch); got != c.fires {
			t.Errorf("%s on %+v: fires %v, want %v", c.rule, c.ch, got, c.fires)
		}
	}
}

func TestRuleErrors(t *testing.T) {
	cases := map[string]string{
		"":                               "empty rule",
		"maxRetries,,x":                  "empty rule",
		"maxretrie>1":                    `did you mean "maxRetries"?`,
		"retryAfter.second":              `did you mean "retryAfter.seconds"?`,
		"maxRetries>x":                   "not a number",
		"maxRetries>NaN":                 "not a number",
		"retryAfter.seconds=":            "no value",
		"nothing.*":                      "unknown column",
		strings.Repeat("a,", MaxRules+1): "more than",
	}
	for in, want := range cases {
		_, err := ParseRules(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseRules(%q): %v, want %q", in, err, want)
		}
	}
}

// TestCheck: a rule fires once per change, naming the client.
func TestCheck(t *testing.T) {
	rs, err := ParseRules("retryAfter.seconds, retryAfter.*")
	if err != nil {
		t.Fatal(err)
	}
	m := &Matrix{Clients: []Entry{{Name: "x", Changes: []Change{{Column: "retryAfter.seconds", Before: "yes", After: "no"}, {Column: "maxRetries", Before: "2", After: "3"}}}}}
	vs := Check(rs, m)
	if len(vs) != 1 || vs[0].Client != "x" || !strings.Contains(vs[0].String(), "retryAfter.seconds: yes → no (rule retryAfter.seconds)") {
		t.Errorf("violations %v", vs)
	}
}

// TestReadValidates: a matrix.json is checked as it is read.
func TestReadValidates(t *testing.T) {
	p := loadFixture(t)
	good := &Matrix{Schema: Schema, Retrylab: "test", Clients: []Entry{{Name: "a", Version: "1", Profile: p}}}
	var b bytes.Buffer
	if err := good.Write(&b); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(bytes.NewReader(b.Bytes())); err != nil {
		t.Fatalf("a good matrix refused: %v", err)
	}
	for in, want := range map[string]string{
		`{"schema":"x"}`: "schema",
		`{"schema":"retrylab.matrix/v1","clients":[{"name":"../a","profile":null,"error":"x"}]}`:            "bad name",
		`{"schema":"retrylab.matrix/v1","clients":[{"name":"a","profile":null}]}`:                           "no profile and no error",
		`{"schema":"retrylab.matrix/v1","clients":[{"name":"a","error":"x"},{"name":"a","error":"y"}]}`:     "twice",
		`{"schema":"retrylab.matrix/v1","clients":[{"name":"a","profile":{"schema":"retrylab.probe/v0"}}]}`: "profile schema",
		`[`: "not a matrix",
	} {
		if _, err := Read(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Read(%s): %v, want %q", in, err, want)
		}
	}
}
