package otlp

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecode feeds the receiver's decode path (each signal, JSON and
// protobuf) and the mappings arbitrary bodies: nothing may panic, and what
// decodes must encode back to OTLP/JSON that decodes again.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "mappings", "*.json"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"attributes":[{"key":"event.name","value":{"stringValue":"codex.api_request"}},{"key":"attempt","value":{"stringValue":"-1e300"}}]}]}]}]}`))
	f.Add([]byte{0x0a, 0x02, 0x0a, 0x00})
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, sig := range []Signal{Traces, Logs, Metrics} {
			for _, enc := range []Encoding{JSON, Protobuf} {
				p, err := Decode(sig, enc, body)
				if err != nil {
					continue
				}
				_ = p.Items()
				acc := Read(Collect([]Payload{p}))
				_ = acc.Events("r", func(string, Attempt) string { return "x" })
				j, err := p.JSON()
				if err != nil {
					t.Fatalf("%s/%s: re-encoding: %v", sig, enc, err)
				}
				if _, err := Decode(sig, JSON, j); err != nil {
					t.Fatalf("%s/%s: OTLP/JSON written does not decode: %v\n%s", sig, enc, err, j)
				}
			}
		}
	})
}
