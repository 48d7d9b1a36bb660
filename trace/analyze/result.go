// The Analysis of the merged acc: totals, rates, sorted lists.

package analyze

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

func ratio(num, den float64) float64 {
	if den == 0 {
		return 0
	}
	return num / den
}

func (a *acc) result(files int, repairThreshold float64) *Analysis {
	an := &Analysis{Schema: Schema}
	an.Inputs = Inputs{Files: files, Events: a.events, MalformedLines: a.malformed, UnknownTypes: a.unknown}
	c, runs := a.runCounts()
	sum := a.groupTotals()
	c.DiagnosisStarted = a.diagStarted
	c.StepFinished = a.stepFinished
	c.Recovered = sum.recovered
	an.Counts = c
	an.Inputs.Runs = runs
	an.Requests = a.requests(sum)
	an.Attempts = a.attempts()
	an.Escalations = Escalations{
		Total: a.escalations, Runs: c.EscalatedRuns,
		Rate:   ratio(float64(c.EscalatedRuns), float64(runs)),
		ByPath: a.escalationPaths(), ByReason: a.byReason,
	}
	an.Groups = a.groupList()
	an.Metrics = Metrics{
		ProviderRetryRate:   an.Requests.RetryRate,
		ProviderFailureRate: an.Requests.FailureRate,
		EscalationRate:      an.Escalations.Rate,
		L2EscalationRate:    ratio(float64(c.L2EscalatedRuns), float64(c.L2Runs)),
		AvgRepairIterations: ratio(float64(c.RepairIterations), float64(c.RepairRuns)),
		DiagnosisRate:       ratio(float64(c.DiagnosisStarted), float64(c.StepFinished)),
	}
	an.DelayHist, an.DurationHist = a.delayHist, a.durHist
	an.Alerts = []AlertResult{}
	a.extraResult(an, repairThreshold)
	return an
}

// runCounts counts the runs (with at least one event of a client) and what
// happened in them: escalations, L2 activity, repairs.
func (a *acc) runCounts() (c Counts, runs int) {
	for _, r := range a.runs {
		if !r.counted {
			continue
		}
		runs++
		if r.escalated {
			c.EscalatedRuns++
		}
		if r.l2Active {
			c.L2Runs++
		}
		if r.l2Escalated {
			c.L2EscalatedRuns++
		}
		if r.repairs > 0 {
			c.RepairRuns++
			if r.hasIter {
				c.RepairIterations = satAdd(c.RepairIterations, r.maxIter)
			} else {
				c.RepairIterations += r.repairs
			}
		}
	}
	return c, runs
}

// groupTotals sums the groups: every request is in exactly one group, so
// the groups sum to the totals.
func (a *acc) groupTotals() groupStats {
	var sum groupStats
	for _, g := range a.groups {
		sum.total += g.total
		sum.succeeded += g.succeeded
		sum.failed += g.failed
		sum.withRetries += g.withRetries
		sum.retries = satAdd(sum.retries, g.retries)
		sum.recovered += g.recovered
	}
	return sum
}

// requests are the request figures of the totals sum.
func (a *acc) requests(sum groupStats) Requests {
	tot := float64(sum.total)
	return Requests{
		Total: sum.total, Succeeded: sum.succeeded, Failed: sum.failed,
		WithRetries: sum.withRetries, Retries: sum.retries,
		RetryRate:     ratio(float64(sum.withRetries), tot),
		FailureRate:   ratio(float64(sum.failed), tot),
		RecoveredRate: ratio(float64(sum.recovered), float64(sum.withRetries)),
		Amplification: ratio(float64(sum.total)+float64(sum.retries), tot),
		DurationMs: Quantiles{
			P50: a.duration.Quantile(0.5), P90: a.duration.Quantile(0.9),
			P99: a.duration.Quantile(0.99), Max: a.duration.Max(),
		},
	}
}

// attempts are the failed attempts' figures: by type, by status (the
// capped rest as OtherStatuses), and the delays before retries.
func (a *acc) attempts() Attempts {
	byStatus := make(map[string]int64, len(a.byStatus))
	for k, v := range a.byStatus {
		if k == otherStatus {
			byStatus[OtherStatuses] = v
			continue
		}
		byStatus[strconv.FormatInt(k, 10)] = v
	}
	return Attempts{
		Failed: a.failedAttempts, ByFailureType: a.byFailureType, ByStatus: byStatus,
		DelayMs: Delays{
			Count: a.delay.Count(), Total: a.delay.Total(),
			P50: a.delay.Quantile(0.5), P90: a.delay.Quantile(0.9),
			P99: a.delay.Quantile(0.99), Max: a.delay.Max(),
		},
	}
}

// escalationPaths lists the escalation paths, most taken first, then by
// name.
func (a *acc) escalationPaths() []EscalationPath {
	paths := make([]EscalationPath, 0, len(a.byPath))
	for k, v := range a.byPath {
		paths = append(paths, EscalationPath{From: k.from, To: k.to, Count: v})
	}
	slices.SortFunc(paths, func(x, y EscalationPath) int {
		return cmp.Or(cmp.Compare(y.Count, x.Count), strings.Compare(x.From, y.From), strings.Compare(x.To, y.To))
	})
	return paths
}

// groupList lists the --by groups, sorted by their keys in the order of
// --by.
func (a *acc) groupList() []Group {
	groups := make([]Group, 0, len(a.groups))
	for k, g := range a.groups {
		groups = append(groups, Group{
			Keys: a.groupKeys(k), Total: g.total, Succeeded: g.succeeded, Failed: g.failed,
			WithRetries: g.withRetries, Retries: g.retries,
			RetryRate:     ratio(float64(g.withRetries), float64(g.total)),
			FailureRate:   ratio(float64(g.failed), float64(g.total)),
			RecoveredRate: ratio(float64(g.recovered), float64(g.withRetries)),
			by:            a.by,
		})
	}
	slices.SortFunc(groups, func(x, y Group) int {
		for _, d := range a.by {
			if c := strings.Compare(x.Keys[d], y.Keys[d]); c != 0 {
				return c
			}
		}
		return 0
	})
	return groups
}

// groupKeys names a group's key by the dimensions of --by.
func (a *acc) groupKeys(k groupKey) map[string]string {
	keys := map[string]string{}
	for _, d := range a.by {
		switch d {
		case "provider":
			keys[d] = k.provider
		case "model":
			keys[d] = k.model
		case "failureType":
			keys[d] = k.failureType
		case "run":
			keys[d] = strings.TrimPrefix(k.run, fileRunPrefix)
		case "day":
			keys[d] = k.day
		case "promptPattern":
			keys[d] = k.promptPattern
		}
	}
	return keys
}
