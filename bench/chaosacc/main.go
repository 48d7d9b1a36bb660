// Command chaosacc measures how accurately `retrylab chaos run` sees the
// waits of each kind of client: for every server-side wait of every
// scenario run in the given run folders (their summary.json, re-runs
// included), the error is the gap the mock measured minus the wait the
// client itself took — the client's recorded delayMs × timeScale for
// clients that write a trace, or, for the SDK clients of testdata/sdk, the
// wait their fetch/middleware hook measured inside the client (the
// "retrylab-sdk-wait" lines of stderr.txt). It prints, per client kind and
// per fault kind of the attempt before the wait, the count, median, p90 and
// worst error, and the share within 5ms + 2%.
//
//	go run ./bench/chaosacc runs/2026-11-22T*
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

type result struct {
	Name      string  `json:"name"`
	Client    string  `json:"client"`
	TimeScale float64 `json:"timeScale"`
	Dir       string  `json:"dir"`
	Faults    []string
	DelaysMs  struct{ Client, Server []int64 } `json:"delaysMs"`
	Reruns    []struct {
		DelaysMs struct{ Client, Server []int64 } `json:"delaysMs"`
		Dir      string                           `json:"dir"`
	} `json:"reruns"`
}

type key struct{ client, fault string }

var sdkWait = regexp.MustCompile(`retrylab-sdk-wait (\d+(?:\.\d+)?)ms`)

func main() {
	errs := map[key][]float64{}
	for _, dir := range os.Args[1:] {
		b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			continue
		}
		var sum struct{ Scenarios []result }
		if err := json.Unmarshal(b, &sum); err != nil {
			fmt.Fprintln(os.Stderr, dir, err)
			continue
		}
		for _, r := range sum.Scenarios {
			add := func(client, server []int64, runDir string) {
				ref := make([]float64, len(client))
				for i, c := range client {
					ref[i] = float64(c) * r.TimeScale
				}
				if len(client) == 0 {
					ref = sdkWaits(filepath.Join(runDir, "stderr.txt"))
				}
				for i, s := range server {
					if i >= len(ref) {
						break
					}
					f := "ok"
					if i < len(r.Faults) {
						f = strings.Fields(r.Faults[i])[0]
					}
					k := key{clientKind(r.Client), f}
					errs[k] = append(errs[k], float64(s)-ref[i])
					all := key{k.client, "all"}
					errs[all] = append(errs[all], float64(s)-ref[i])
				}
			}
			add(r.DelaysMs.Client, r.DelaysMs.Server, r.Dir)
			for _, rr := range r.Reruns {
				add(rr.DelaysMs.Client, rr.DelaysMs.Server, rr.Dir)
			}
		}
	}
	var keys []key
	for k := range errs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].client != keys[j].client {
			return keys[i].client < keys[j].client
		}
		return keys[i].fault < keys[j].fault
	})
	fmt.Println("| client | fault before the wait | waits | median error | p90 | worst |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, k := range keys {
		e := errs[k]
		slices.Sort(e)
		worst := e[0]
		if math.Abs(e[len(e)-1]) > math.Abs(worst) {
			worst = e[len(e)-1]
		}
		fmt.Printf("| %s | %s | %d | %+.0fms | %+.0fms | %+.0fms |\n", k.client, k.fault, len(e),
			e[len(e)/2], e[int(math.Ceil(0.9*float64(len(e))))-1], worst)
	}
}

func clientKind(c string) string {
	switch {
	case c == "built-in":
		return "built-in"
	case strings.Contains(c, "sdk/node"), strings.HasPrefix(c, "node "):
		return "node-sdk"
	case strings.Contains(c, "sdk/go"):
		return "go-sdk"
	case strings.Contains(c, ".sh"):
		return "shell"
	}
	return "other"
}

// sdkWaits reads the waits an SDK client measured itself.
func sdkWaits(path string) []float64 {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []float64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := sdkWait.FindStringSubmatch(sc.Text()); m != nil {
			v, _ := strconv.ParseFloat(m[1], 64)
			out = append(out, v)
		}
	}
	return out
}
