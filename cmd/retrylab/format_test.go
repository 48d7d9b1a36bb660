package main

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFormatsWording: each command's --format error says what it always
// said, in its own wording (the chaos commands' or the trace commands'),
// and the flag's help lists the same values.
func TestFormatsWording(t *testing.T) {
	type said struct{ Help, Msg, Hint string }
	pick := func(help string, pick func(string) error) said {
		var ue *userError
		if err := pick("yaml"); !errors.As(err, &ue) {
			t.Fatalf("pick(yaml) = %v, want a usage error", err)
		}
		return said{help, ue.msg, ue.hint}
	}
	for _, tt := range []struct {
		name      string
		got, want said
	}{
		{"chaos run", pick(chaosFormats.help(), func(v string) error { _, err := chaosFormats.pick(v); return err }),
			said{"table, json, markdown or junit", `unknown format "yaml"`, "formats: table, json, markdown, junit"}},
		{"chaos probe", pick(probeFormats.help(), func(v string) error { _, err := probeFormats.pick(v); return err }),
			said{"table, json, markdown or html", `unknown format "yaml"`, "formats: table, json, markdown, html"}},
		{"trace analyze", pick(analysisFormats.help(), func(v string) error { _, err := analysisFormats.pick(v); return err }),
			said{"table, json, markdown, openmetrics or html", `unknown --format "yaml"`, "use --format table, json, markdown, openmetrics or html"}},
		{"trace compare", pick(compareFormats.help(), func(v string) error { _, err := compareFormats.pick(v); return err }),
			said{"table, json or markdown", `unknown --format "yaml"`, "use --format table, json or markdown"}},
		{"trace failures", pick(failureFormats.help(), func(v string) error { _, err := failureFormats.pick(v); return err }),
			said{"csv or jsonl", `unknown --format "yaml"`, "use --format csv or jsonl"}},
		{"trace export", pick(exportFormats.help(), func(v string) error { _, err := exportFormats.pick(v); return err }),
			said{"otlp", `unknown --format "yaml"`, "use --format otlp"}},
	} {
		if diff := cmp.Diff(tt.want, tt.got); diff != "" {
			t.Errorf("%s: --format mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}
