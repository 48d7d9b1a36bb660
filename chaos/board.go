package chaos

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"syscall"

	"github.com/mattn/go-runewidth"
	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/chaos/scenario"
	"golang.org/x/term"
)

// board is the live view on a terminal. Each scenario's end is one line,
// printed once above the board, where it scrolls into the terminal's
// scrollback with the rest of the run; the board below it holds what is
// running, each scenario's latest progress line, and the counts, and is
// redrawn in place.
//
// A redraw moves the cursor up over the board it drew last and draws over
// it. That reaches the board only while the whole board is on the screen:
// rows scrolled off the top are out of reach of the cursor, and a redraw
// then leaves them in the scrollback and draws them again below. So the
// board is never taller than the terminal less the cursor's row (running
// scenarios past that are counted: "… and 12 more running"), and none of
// its lines is as wide as the terminal, in display cells, so that none
// wraps. The terminal's size is asked at every redraw: a resized window
// takes effect at the next one.
//
// Off a terminal the runner prints plain progress lines instead, which is
// what CI logs want.
type board struct {
	mu    sync.Mutex
	w     io.Writer
	color bool
	size  func() (width, height int)
	nameW int // the widest scenario name, in cells
	rows  map[string]*boardRow
	// running are the scenarios running now, in the order they started.
	running []string
	queued  int
	waiting int            // first runs ended, waiting to be confirmed
	done    map[string]int // scenarios ended, by verdict
	above   []string       // to print above the board at the next redraw
	drawn   int            // rows of the board on the screen
	closed  bool
}

type boardRow struct {
	status string // the latest progress line
	phase  int
	held   string // the first run's end, while a re-run confirms it
}

// Phases of a scenario on the board.
const (
	phaseQueued = iota
	phaseRunning
	phaseWaiting // its first run ended; it waits to be re-run (Runner.Confirm)
	phaseDone
)

// verdictOrder is the order of the counts on the board.
var verdictOrder = []struct{ verdict, word string }{
	{VerdictPass, "passed"}, {VerdictFail, "failed"}, {VerdictInconclusive, "inconclusive"},
	{VerdictSkipped, "skipped"}, {VerdictError, "could not run"}, {VerdictInterrupted, "interrupted"},
}

// newBoard is a board of scs on w, whose size in cells size tells (asked
// at each redraw).
func newBoard(w io.Writer, color bool, size func() (width, height int), scs []*scenario.Scenario) *board {
	b := &board{w: w, color: color, size: size, rows: map[string]*boardRow{}, done: map[string]int{}}
	for _, sc := range scs {
		name := boardText(sc.Name)
		b.rows[sc.Name] = &boardRow{status: "queued"}
		b.nameW = max(b.nameW, runewidth.StringWidth(name))
		b.queued++
	}
	return b
}

// set makes s the latest progress line of the scenario name, which is
// running from now on if it was not. A line of anything else than a
// scenario on the board ("run": the interrupt's messages), or of one that
// has ended, is printed above the board as it is.
func (b *board) set(name, s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	row := b.rows[name]
	switch {
	case b.closed:
		fmt.Fprintf(b.w, "[%s] %s\n", boardText(name), boardText(s))
		return
	case row == nil || row.phase == phaseDone:
		b.above = append(b.above, fmt.Sprintf("[%s] %s", boardText(name), boardText(s)))
	default:
		row.status = s
		b.start(name, row)
	}
	b.redraw()
}

// start moves a queued or waiting scenario to the running ones.
func (b *board) start(name string, row *boardRow) {
	switch row.phase {
	case phaseQueued:
		b.queued--
	case phaseWaiting:
		b.waiting--
	default:
		return
	}
	row.phase = phaseRunning
	b.running = append(b.running, name)
}

// stop takes a scenario off the running ones (or the queued or waiting
// ones) ahead of its next phase.
func (b *board) stop(name string, row *boardRow) {
	switch row.phase {
	case phaseQueued:
		b.queued--
	case phaseWaiting:
		b.waiting--
	case phaseRunning:
		for i, n := range b.running {
			if n == name {
				b.running = append(b.running[:i], b.running[i+1:]...)
				break
			}
		}
	}
}

// hold, finish and close do nothing on a nil board: a run off a terminal
// has none.

// hold says that the first run of the scenario name has ended and that it
// waits to be re-run to confirm its verdict: it leaves the running ones,
// and its last line is kept for the line that ends it.
func (b *board) hold(name string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	row := b.rows[name]
	if row == nil || b.closed || row.phase == phaseDone || row.phase == phaseWaiting {
		return
	}
	b.stop(name, row)
	row.phase, row.held = phaseWaiting, row.status
	b.waiting++
	b.redraw()
}

// finish says that the scenario name has ended with verdict: its latest
// line is printed above the board, once (with its first run's, when a
// re-run confirmed it), and it is counted.
func (b *board) finish(name, verdict string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	row := b.rows[name]
	if row == nil || b.closed || row.phase == phaseDone {
		return
	}
	b.stop(name, row)
	row.phase = phaseDone
	b.done[verdict]++
	line := row.status
	if row.held != "" && row.held != row.status {
		line += " (run 1: " + row.held + ")"
	}
	b.above = append(b.above, b.finishedLine(name, line))
	b.redraw()
}

// close prints what is left to print above the board and erases the board;
// later lines are printed as they come.
func (b *board) close() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.closed = true
	b.redraw()
}

// draw draws the board for the first time.
func (b *board) draw() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.redraw()
}

// finishedLine is the line that says a scenario ended: its name, padded as
// on the board, and its last progress line, in green or red when it says
// PASS or FAIL.
func (b *board) finishedLine(name, s string) string {
	s = boardText(s)
	if b.color {
		switch {
		case strings.HasPrefix(s, "PASS"):
			s = "\x1b[32m" + s + "\x1b[0m"
		case strings.HasPrefix(s, "FAIL"):
			s = "\x1b[31m" + s + "\x1b[0m"
		}
	}
	return padCells(boardText(name), b.nameW) + "  " + s
}

// redraw draws the lines to print above the board, then the board, over
// the board drawn last, in one write.
//
// The old board is erased row by row (erase line, cursor down) before
// anything is drawn: erasing to the end of the screen would be shorter,
// but tmux keeps a screen erased from its top-left corner in its
// scrollback (scroll-on-clear), and a board at the top of the screen
// would be left there on every redraw.
func (b *board) redraw() {
	var sb strings.Builder
	sb.WriteString("\r")
	if b.drawn > 0 {
		fmt.Fprintf(&sb, "\x1b[%dA", b.drawn)
		for range b.drawn {
			sb.WriteString("\x1b[2K\x1b[B")
		}
		fmt.Fprintf(&sb, "\x1b[%dA", b.drawn)
	}
	for _, l := range b.above {
		sb.WriteString(l + "\n")
	}
	b.above = b.above[:0]
	var lines []string
	if !b.closed {
		lines = b.lines(b.size())
	}
	for _, l := range lines {
		sb.WriteString(l + "\n")
	}
	b.drawn = len(lines)
	io.WriteString(b.w, sb.String())
}

// lines are the board's lines in a terminal of width × height cells: the
// running scenarios, as many as fit above the counts with the cursor's row
// below them, each cut to less than width.
func (b *board) lines(width, height int) []string {
	if width <= 0 || height <= 0 {
		width, height = 80, 24
	}
	room := height - 1 // the cursor's row, below the board, must stay on the screen
	if room < 1 {
		return nil
	}
	var out []string
	shown := b.running
	if len(shown) > room-1 {
		// One row for "… and N more running", one for the counts.
		shown = shown[:max(room-2, 0)]
	}
	nameW := min(b.nameW, width/2)
	for _, name := range shown {
		out = append(out, fitCells(padCells(fitCells(boardText(name), nameW+1), nameW)+"  "+boardText(b.rows[name].status), width))
	}
	if more := len(b.running) - len(shown); more > 0 && room >= 2 {
		out = append(out, fitCells(fmt.Sprintf("… and %d more running", more), width))
	}
	return append(out, fitCells(b.counts(), width))
}

// counts is the board's last line: how many scenarios run, wait and ended,
// and how.
func (b *board) counts() string {
	var parts []string
	parts = append(parts, fmt.Sprintf("%d running", len(b.running)))
	if b.queued > 0 {
		parts = append(parts, fmt.Sprintf("%d queued", b.queued))
	}
	if b.waiting > 0 {
		parts = append(parts, fmt.Sprintf("%d to confirm", b.waiting))
	}
	total := 0
	var how []string
	for _, v := range verdictOrder {
		if n := b.done[v.verdict]; n > 0 {
			total += n
			how = append(how, fmt.Sprintf("%d %s", n, v.word))
		}
	}
	s := strings.Join(parts, ", ") + fmt.Sprintf("; %d ended", total)
	if len(how) > 0 {
		s += ": " + strings.Join(how, ", ")
	}
	return s
}

// boardText is s as the board shows it: on one line, with every control
// character (a client's own escape sequences or carriage returns among
// them) shown as U+FFFD, so that no line moves the cursor.
func boardText(s string) string {
	return mock.Printable(strings.ReplaceAll(s, "\t", " "))
}

// fitCells cuts s to less than width display cells, ending it with "…"
// where it is cut: a line of the full width would leave the cursor at the
// edge, where some terminals wrap the newline that follows.
func fitCells(s string, width int) string {
	limit := max(width-1, 1)
	if runewidth.StringWidth(s) <= limit {
		return s
	}
	return runewidth.Truncate(s, limit, "…")
}

// padCells pads s with spaces to width display cells.
func padCells(s string, width int) string {
	if n := width - runewidth.StringWidth(s); n > 0 {
		return s + strings.Repeat(" ", n)
	}
	return s
}

// termSize returns a function that asks the terminal w writes to for its
// size, in cells, at each call; 80 × 24 when w is no terminal or does not
// tell. It reads the descriptor through SyscallConn, which, unlike
// os.File.Fd, leaves it as it is.
func termSize(w io.Writer) func() (width, height int) {
	sc, ok := w.(syscall.Conn)
	return func() (int, int) {
		width, height := 80, 24
		if !ok {
			return width, height
		}
		rc, err := sc.SyscallConn()
		if err != nil {
			return width, height
		}
		_ = rc.Control(func(fd uintptr) {
			if wd, h, err := term.GetSize(int(fd)); err == nil && wd > 0 && h > 0 {
				width, height = wd, h
			}
		})
		return width, height
	}
}
