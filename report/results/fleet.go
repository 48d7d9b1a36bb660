package results

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/retrylab/retrylab/chaos"
	"github.com/retrylab/retrylab/chaos/fleet"
)

// fleetLine is a fleet's figures on one line, for the table.
func fleetLine(f *fleet.Figures) string {
	return fmt.Sprintf("%d/%d clients survived, %d attempts for %d requests (amplification %s), synchrony %s, %d×429 %d×529, goodput %s/min, %s, %d output tokens wasted",
		f.Survived, f.Clients, f.Attempts, f.Requests, num(f.Amplification), synchrony(f), f.Status429, f.Status529,
		num(f.GoodputPerMin), recovery(f), f.WastedOutputTokens)
}

// num is a figure with at most four significant digits.
func num(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

func synchrony(f *fleet.Figures) string {
	if f.Synchrony == nil {
		return "- (no retries)"
	}
	return num(*f.Synchrony)
}

// recovery says recoveryMs in words.
func recovery(f *fleet.Figures) string {
	if f.RecoveryMs == nil {
		return "no recovery measured (no outage, or metastable)"
	}
	return "recovered " + (time.Duration(*f.RecoveryMs) * time.Millisecond).String() + " after the outage"
}

// tableFleets says each fleet's figures after the table.
func tableFleets(w io.Writer, s *chaos.Summary) {
	first := true
	for _, r := range s.Scenarios {
		if r.Fleet == nil {
			continue
		}
		if first {
			fmt.Fprintln(w, "\nFleets (result.json's fleet; docs/chaos.md, Fleet figures):")
			first = false
		}
		fmt.Fprintf(w, "  %s: %s\n", r.Name, fleetLine(r.Fleet))
	}
}

// markdownFleets is a table of the fleets' figures.
func markdownFleets(w io.Writer, s *chaos.Summary) {
	first := true
	for _, r := range s.Scenarios {
		f := r.Fleet
		if f == nil {
			continue
		}
		if first {
			fmt.Fprintln(w, "\n### Fleets")
			fmt.Fprintln(w, "\n| scenario | clients | survived | requests | attempts | amplification | synchrony | 429 | 529 | goodput/min | recovery | wasted output tokens |")
			fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|")
			first = false
		}
		rec := "-"
		if f.RecoveryMs != nil {
			rec = fmt.Sprintf("%dms", *f.RecoveryMs)
		}
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %s | %s | %d | %d | %s | %s | %d |\n", mdEscape(r.Name), f.Clients, f.Survived,
			f.Requests, f.Attempts, num(f.Amplification), synchrony(f), f.Status429, f.Status529, num(f.GoodputPerMin), rec, f.WastedOutputTokens)
	}
}

// fleetProperties are a fleet's figures as JUnit properties (fleet.KEY,
// the keys of result.json; recoveryMs and synchrony absent when null).
func fleetProperties(f *fleet.Figures) []junitProperty {
	if f == nil {
		return nil
	}
	ps := []junitProperty{
		{"fleet.clients", fmt.Sprint(f.Clients)},
		{"fleet.survived", fmt.Sprint(f.Survived)},
		{"fleet.requests", fmt.Sprint(f.Requests)},
		{"fleet.attempts", fmt.Sprint(f.Attempts)},
		{"fleet.amplification", num(f.Amplification)},
	}
	if f.Synchrony != nil {
		ps = append(ps, junitProperty{"fleet.synchrony", num(*f.Synchrony)})
	}
	ps = append(ps,
		junitProperty{"fleet.status429", fmt.Sprint(f.Status429)},
		junitProperty{"fleet.status529", fmt.Sprint(f.Status529)},
		junitProperty{"fleet.goodputPerMin", num(f.GoodputPerMin)})
	if f.RecoveryMs != nil {
		ps = append(ps, junitProperty{"fleet.recoveryMs", fmt.Sprint(*f.RecoveryMs)})
	}
	return append(ps, junitProperty{"fleet.wastedOutputTokens", fmt.Sprint(f.WastedOutputTokens)})
}
