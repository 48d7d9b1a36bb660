package trace_test

import (
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
