package chaos

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/chaos/scenario"
)

// boardScript is one scenario of a simulated run: the progress lines of
// its first run, the last of which ends it, and whether that run waits to
// be confirmed by a re-run.
type boardScript struct {
	name    string
	lines   []string
	verdict string
	confirm bool
}

// boardSuite is n scenarios as a run of the suite shows them: names of
// many lengths, progress lines longer than any terminal, a client's own
// tabs, carriage returns and escape sequences, wide characters, and some
// first runs that a re-run must confirm.
func boardSuite(n int) []boardScript {
	var out []boardScript
	for i := range n {
		name := fmt.Sprintf("scenario-%02d", i)
		if i%3 == 1 {
			name += "-" + strings.Repeat("long", i%9) // up to 43 characters
		}
		s := boardScript{name: name, verdict: VerdictPass}
		s.lines = []string{
			"starting (3 faults, timeScale 0.25, client built-in)",
			"attempt 1 met overloaded 529 → HTTP 529, 312 bytes, closed by server",
			"[retry] Attempt 1/3: 529 — waiting 1s — overloaded (backoff)",
		}
		switch i % 5 {
		case 1:
			s.lines = append(s.lines, "client said: "+strings.Repeat("a very long line of a client's output ", 8))
		case 2:
			s.lines = append(s.lines, "client said:\tprogress 50%\r\x1b[2Jprogress 100%\x1b[1A")
		case 3:
			s.lines = append(s.lines, "client said: "+strings.Repeat("サーバーが過負荷です。", 12))
		}
		s.lines = append(s.lines, fmt.Sprintf("attempt 2 met ok → HTTP 200, %d bytes, closed by client", 1000+i))
		switch {
		case i%7 == 3:
			s.confirm, s.verdict = true, VerdictFail
			s.lines = append(s.lines, fmt.Sprintf("FAIL (delays.server) in %dms", 800+i))
		case i%11 == 5:
			s.verdict = VerdictFail
			s.lines = append(s.lines, fmt.Sprintf("FAIL (attempts, delays.client) in %dms", 900+i))
		default:
			s.lines = append(s.lines, fmt.Sprintf("PASS in %dms", 1000+i))
		}
		out = append(out, s)
	}
	return out
}

// driveBoard runs the scripts on b as Runner.Run would at parallel par:
// first runs, at most par at once, their lines interleaved in an order
// drawn from seed; then re-runs of those that wait to be confirmed, two at
// once; then an interrupt's message and the end of the run. check is
// called after every call on the board. It returns the lines the board
// must have printed above itself, in order.
func driveBoard(b *board, scripts []boardScript, par int, seed uint64, check func()) []string {
	rng := rand.New(rand.NewPCG(seed, 0))
	nameW := 0
	for _, s := range scripts {
		nameW = max(nameW, len(s.name))
	}
	line := func(name, s string) string { return fmt.Sprintf("%-*s  %s", nameW, name, s) }
	var want []string
	type run struct {
		s    boardScript
		next int
	}
	var running []*run
	queue := scripts
	var held []boardScript
	step := func(lines func(boardScript) []string, end func(boardScript)) {
		i := rng.IntN(len(running))
		r := running[i]
		b.set(r.s.name, lines(r.s)[r.next])
		check()
		r.next++
		if r.next == len(lines(r.s)) {
			running = append(running[:i], running[i+1:]...)
			end(r.s)
			check()
		}
	}
	first := func(s boardScript) []string { return s.lines }
	for len(queue) > 0 || len(running) > 0 {
		for len(running) < par && len(queue) > 0 {
			running = append(running, &run{s: queue[0]})
			queue = queue[1:]
		}
		step(first, func(s boardScript) {
			if s.confirm {
				b.hold(s.name)
				held = append(held, s)
				return
			}
			b.finish(s.name, s.verdict)
			want = append(want, line(s.name, s.lines[len(s.lines)-1]))
		})
	}
	rerun := func(s boardScript) []string {
		return []string{"run 2 of at most 3, to confirm (delays.server)", "starting (3 faults, timeScale 0.25, client built-in)",
			"PASS in 301ms", "PASS after 2 runs"}
	}
	for len(held) > 0 || len(running) > 0 {
		for len(running) < 2 && len(held) > 0 {
			running = append(running, &run{s: held[0]})
			held = held[1:]
		}
		step(rerun, func(s boardScript) {
			b.finish(s.name, VerdictPass)
			want = append(want, line(s.name, "PASS after 2 runs (run 1: "+s.lines[len(s.lines)-1]+")"))
		})
	}
	b.set("run", "deleting the run's proxies after the interrupt: connection refused (tried again at exit)")
	check()
	want = append(want, "[run] deleting the run's proxies after the interrupt: connection refused (tried again at exit)")
	b.close()
	check()
	return want
}

// countsLine is the start of the board's counts, which are cut on a
// narrow terminal.
var countsLine = regexp.MustCompile(`^\d+ running[,;]`)

// TestBoardRedrawsInPlace: a run of 40 scenarios at parallel 8, on a
// terminal of every height from one that holds the whole board to one
// that holds its counts only, leaves in the scrollback what it printed
// above the board, each line once and in order, and nothing else: no row
// of the board is ever out of reach of the redraw (every row of it stays
// on the screen, none wraps), and the board's last line is its counts.
func TestBoardRedrawsInPlace(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		w, h, par int
	}{
		{120, 40, 8}, {120, 24, 8}, {80, 10, 8}, {160, 50, 8}, {80, 12, 8},
		{120, 40, 40}, {160, 50, 40}, {80, 12, 40}, // the board fills the screen
		{80, 5, 8},   // "… and N more running" and the counts only
		{60, 3, 8},   // the counts only
		{40, 2, 8},   // the counts only, on a terminal of two rows
		{80, 1, 8},   // no room for a board: the ends only
		{30, 24, 40}, // narrower than the names: every line cut
	} {
		t.Run(fmt.Sprintf("%dx%d/parallel-%d", tc.w, tc.h, tc.par), func(t *testing.T) {
			t.Parallel()
			vt := newVterm(t, tc.w, tc.h)
			const header = "running 40 scenarios (seed 42, toxiproxy embedded)"
			fmt.Fprintln(vt, header)
			scripts := boardSuite(40)
			var scs []*scenario.Scenario
			for _, s := range scripts {
				scs = append(scs, &scenario.Scenario{Name: s.name})
			}
			b := newBoard(vt, true, func() (int, int) { return tc.w, tc.h }, scs)
			b.draw()
			check := func() {
				t.Helper()
				if b.drawn > max(tc.h-1, 0) {
					t.Fatalf("the board is %d rows on a terminal of %d", b.drawn, tc.h)
				}
				top := vt.row - b.drawn
				if top < 0 {
					t.Fatalf("the board starts %d rows above the screen", -top)
				}
				for r := top; r < vt.row; r++ {
					if vt.cont[r] {
						t.Fatalf("board row %d wrapped: %q", r-top, rowText(vt.screen[r], true))
					}
				}
				if b.drawn > 0 && !b.closed {
					if last := rowText(vt.screen[vt.row-1], true); !countsLine.MatchString(last) {
						t.Fatalf("the board's last row is %q, not its counts", last)
					}
				}
			}
			want := append([]string{header}, driveBoard(b, scripts, tc.par, uint64(tc.w*tc.h), check)...)
			got := vt.transcript()
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("scrollback and screen mismatch (-want +got):\n%s", diff)
			}
			seen := map[string]bool{}
			for _, l := range got {
				if l != "" && seen[l] {
					t.Errorf("line %q shown twice", l)
				}
				seen[l] = true
			}
		})
	}
}

// TestBoardLines: what the board holds at a given size.
func TestBoardLines(t *testing.T) {
	t.Parallel()
	scs := []*scenario.Scenario{{Name: "anthropic-sdk-defaults"}, {Name: "b"}, {Name: "c"}, {Name: "d"}, {Name: "e"}}
	tests := []struct {
		name          string
		width, height int
		want          []string
	}{
		{"all fit", 80, 24, []string{
			"anthropic-sdk-defaults  attempt 2 met overloaded 529 → HTTP 529, 312 bytes, cl…",
			"b                       starting",
			"c                       [retry] Attempt 1/3: 529 — waiting 1s — overloaded (ba…",
			"3 running, 1 to confirm; 1 ended: 1 passed",
		}},
		{"exactly fit: three running and the counts above the cursor's row", 80, 5, []string{
			"anthropic-sdk-defaults  attempt 2 met overloaded 529 → HTTP 529, 312 bytes, cl…",
			"b                       starting",
			"c                       [retry] Attempt 1/3: 529 — waiting 1s — overloaded (ba…",
			"3 running, 1 to confirm; 1 ended: 1 passed",
		}},
		{"one row short: the rest counted", 80, 4, []string{
			"anthropic-sdk-defaults  attempt 2 met overloaded 529 → HTTP 529, 312 bytes, cl…",
			"… and 2 more running",
			"3 running, 1 to confirm; 1 ended: 1 passed",
		}},
		{"two rows: the counts only", 80, 2, []string{"3 running, 1 to confirm; 1 ended: 1 passed"}},
		{"one row: no board", 80, 1, nil},
		{"narrow: names cut to half the width", 24, 24, []string{
			"anthropic-s…  attempt …",
			"b             starting",
			"c             [retry] …",
			"3 running, 1 to confir…",
		}},
		{"unknown size: 80 × 24", 0, 0, []string{
			"anthropic-sdk-defaults  attempt 2 met overloaded 529 → HTTP 529, 312 bytes, cl…",
			"b                       starting",
			"c                       [retry] Attempt 1/3: 529 — waiting 1s — overloaded (ba…",
			"3 running, 1 to confirm; 1 ended: 1 passed",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := newBoard(io.Discard, false, func() (int, int) { return 80, 24 }, scs)
			b.set("anthropic-sdk-defaults", "attempt 2 met overloaded 529 → HTTP 529, 312 bytes, closed by server")
			b.set("b", "starting")
			b.set("c", "[retry] Attempt 1/3: 529 — waiting 1s — overloaded (backoff)")
			b.set("d", "PASS in 1671ms")
			b.finish("d", VerdictPass)
			b.set("e", "FAIL (delays.server) in 812ms")
			b.hold("e")
			if diff := cmp.Diff(tt.want, b.lines(tt.width, tt.height)); diff != "" {
				t.Errorf("lines(%d, %d) mismatch (-want +got):\n%s", tt.width, tt.height, diff)
			}
		})
	}
}

// TestRunLiveBoard: a run on a terminal of 80 × 6, with more scenarios
// running than the board can show, leaves each scenario's end in the
// scrollback once, the skipped ones said once before, and no board.
func TestRunLiveBoard(t *testing.T) {
	var scs []*scenario.Scenario
	for i := range 9 {
		scs = append(scs, parse(t, fmt.Sprintf("overloaded-%d", i), `
client: {policy: forgeflare}
timeScale: 0.01
attempts: [{status: 529}]
expect: {outcome: success, attempts: 2}
`))
	}
	scs = append(scs, parse(t, "needs-node", `
client: {command: [retrylab-no-such-program], requires: [retrylab-no-such-program]}
expect: {outcome: success}
`))
	vt := newVterm(t, 80, 6)
	r := &Runner{Toxi: runnerToxi(t), Out: t.TempDir(), Seed: 1, Parallel: 6, Progress: vt,
		Live: true, Color: true, TermSize: func() (int, int) { return vt.w, vt.h }}
	sum, err := r.Run(context.Background(), scs)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	want = append(want, "SKIP needs-node: missing retrylab-no-such-program (not in PATH)")
	for _, res := range sum.Scenarios {
		if res.Verdict != VerdictSkipped {
			want = append(want, fmt.Sprintf("%-12s  %s in %dms", res.Name, verdictLine(res), res.DurationMs))
		}
	}
	got := vt.transcript()
	slices.Sort(want[1:])
	if len(got) > 1 {
		slices.Sort(got[1:]) // the scenarios end in any order
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("scrollback and screen mismatch (-want +got):\n%s", diff)
	}
}
