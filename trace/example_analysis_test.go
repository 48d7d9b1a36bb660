package trace_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/retrylab/retrylab/trace"
)

func ExampleReader() {
	in := "{\"type\":\"RunStarted\",\"runId\":\"r1\",\"payload\":{}}\r\n\nnot json\n{\"type\":\"RunFinished\",\"payload\":{\"success\":true}}"
	r, _ := trace.NewReader(strings.NewReader(in), "trace.jsonl")
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		var le *trace.LineError
		if errors.As(err, &le) {
			fmt.Println("skip", le)
			continue
		}
		fmt.Println(ev.Line, ev.Type, string(ev.RunID))
	}
	// Output:
	// 1 RunStarted r1
	// skip trace.jsonl:3: not a JSON object
	// 4 RunFinished
}

func ExampleAnalyze() {
	files, err := trace.Discover([]string{"testdata/corpus"})
	if err != nil {
		panic(err)
	}
	a, err := trace.Analyze(context.Background(), files, trace.Options{Alerts: trace.DefaultAlerts(), MinSamples: 1})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d requests, retry rate %.2f, amplification %.2f\n", a.Requests.Total, a.Requests.RetryRate, a.Requests.Amplification)
	for _, al := range a.Alerts {
		fmt.Printf("%s: %s\n", al.Name, al.State)
	}
	// Output:
	// 4 requests, retry rate 0.75, amplification 2.50
	// provider_retry_rate: firing
	// l2_escalation_rate: warning
	// avg_repair_iterations: ok
	// diagnosis_rate: warning
}
