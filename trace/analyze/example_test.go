package analyze_test

import (
	"context"
	"fmt"

	"github.com/retrylab/retrylab/trace"
	"github.com/retrylab/retrylab/trace/analyze"
)

func ExampleRun() {
	files, err := trace.Discover([]string{"../testdata/corpus"})
	if err != nil {
		panic(err)
	}
	a, err := analyze.Run(context.Background(), files, analyze.Options{Alerts: analyze.DefaultAlerts(), MinSamples: 1})
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
