package chaos

import (
	"strconv"
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"
)

// vterm is a terminal of w × h cells with a scrollback, for the tests of
// the live board: it interprets what the board writes as a VT100-style
// terminal does (xterm, tmux), with the tty's newline translation on
// (\n moves to the start of the next line), and as tmux does, keeps in
// the scrollback a screen erased from its top-left corner. A row scrolled off the top
// goes to the scrollback, where no cursor movement reaches it. A sequence
// it does not know fails the test: the board must write only these.
type vterm struct {
	t      *testing.T
	w, h   int
	screen [][]rune // h rows of w cells; 0 is an empty cell
	// cont[r] says that screen row r continues row r-1: a line wrapped
	// into it.
	cont       []bool
	scrollback []string // lines, wrapped rows joined
	row, col   int
	// pending is the state after a character written in the last column:
	// the next character wraps to the next row first.
	pending bool
	wraps   int // characters wrapped to a new row
}

func newVterm(t *testing.T, w, h int) *vterm {
	v := &vterm{t: t, w: w, h: h}
	v.screen = make([][]rune, h)
	v.cont = make([]bool, h)
	for i := range v.screen {
		v.screen[i] = make([]rune, w)
	}
	return v
}

func (v *vterm) Write(p []byte) (int, error) {
	s := []rune(string(p))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\x1b':
			i = v.escape(s, i)
		case c == '\r':
			v.col, v.pending = 0, false
		case c == '\n':
			v.col, v.pending = 0, false
			v.lineFeed(false)
		case c < 0x20 || c == 0x7f:
			v.t.Errorf("vterm: the board wrote control character %q", c)
		default:
			v.put(c)
		}
	}
	return len(p), nil
}

// escape interprets the CSI sequence at s[i:] and returns the index of its
// last rune.
func (v *vterm) escape(s []rune, i int) int {
	if i+1 >= len(s) || s[i+1] != '[' {
		v.t.Errorf("vterm: escape not followed by [ in %q", string(s[i:min(i+10, len(s))]))
		return i
	}
	j := i + 2
	for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ';') {
		j++
	}
	if j >= len(s) {
		v.t.Errorf("vterm: unterminated sequence %q", string(s[i:]))
		return j
	}
	param := string(s[i+2 : j])
	n, _ := strconv.Atoi(param)
	switch s[j] {
	case 'A': // cursor up, stopping at the top row
		v.row = max(v.row-max(n, 1), 0)
		v.pending = false
	case 'K':
		switch param {
		case "", "0":
			clear(v.screen[v.row][v.col:])
		case "2":
			clear(v.screen[v.row])
		default:
			v.t.Errorf("vterm: erase in line %q", param)
		}
	case 'B': // cursor down, stopping at the bottom row
		v.row = min(v.row+max(n, 1), v.h-1)
		v.pending = false
	case 'J':
		if param != "" && param != "0" {
			v.t.Errorf("vterm: erase in display %q", param)
		}
		if v.row == 0 && v.col == 0 {
			// tmux (scroll-on-clear, on by default) keeps a screen
			// erased from its top-left corner: its rows up to the last
			// that is not empty go to the scrollback first.
			last := -1
			for r := range v.h {
				if rowText(v.screen[r], true) != "" {
					last = r
				}
			}
			for r := 0; r <= last; r++ {
				text := rowText(v.screen[r], r == v.h-1 || !v.cont[r+1])
				if v.cont[r] && len(v.scrollback) > 0 {
					v.scrollback[len(v.scrollback)-1] += text
				} else {
					v.scrollback = append(v.scrollback, text)
				}
				v.cont[r] = false
			}
		}
		clear(v.screen[v.row][v.col:])
		for r := v.row + 1; r < v.h; r++ {
			clear(v.screen[r])
		}
	case 'm': // colours
	default:
		v.t.Errorf("vterm: unknown sequence %q", string(s[i:j+1]))
	}
	return j
}

// lineFeed moves the cursor down a row, scrolling the top row into the
// scrollback at the bottom; wrapped says the new row continues the line.
func (v *vterm) lineFeed(wrapped bool) {
	if v.row < v.h-1 {
		v.row++
	} else {
		// Row 0 is continued by row 1, or by the new row on a terminal
		// of one row.
		continued := v.h > 1 && v.cont[1] || v.h == 1 && wrapped
		text := rowText(v.screen[0], !continued)
		if v.cont[0] && len(v.scrollback) > 0 {
			v.scrollback[len(v.scrollback)-1] += text
		} else {
			v.scrollback = append(v.scrollback, text)
		}
		copy(v.screen, v.screen[1:])
		copy(v.cont, v.cont[1:])
		v.screen[v.h-1] = make([]rune, v.w)
	}
	v.cont[v.row] = wrapped
}

func (v *vterm) put(c rune) {
	cw := runewidth.RuneWidth(c)
	if cw == 0 {
		return
	}
	if v.pending || v.col+cw > v.w {
		v.col, v.pending = 0, false
		v.lineFeed(true)
		v.wraps++
	}
	if v.screen[v.row][v.col] == -1 && v.col > 0 {
		v.screen[v.row][v.col-1] = ' ' // half of a wide character left
	}
	v.screen[v.row][v.col] = c
	for k := 1; k < cw; k++ {
		v.screen[v.row][v.col+k] = -1 // the right half of a wide character
	}
	v.col += cw
	if v.col >= v.w {
		v.col, v.pending = v.w-1, true
	}
}

// rowText is a row's text, its trailing blanks trimmed unless the next row
// continues it.
func rowText(r []rune, trim bool) string {
	var sb strings.Builder
	for _, c := range r {
		switch c {
		case 0:
			sb.WriteRune(' ')
		case -1:
		default:
			sb.WriteRune(c)
		}
	}
	if !trim {
		return sb.String()
	}
	return strings.TrimRight(sb.String(), " ")
}

// transcript is what a person scrolling back sees, line by line (the
// rows of a wrapped line joined): the scrollback, then the screen, without
// the empty rows at its end.
func (v *vterm) transcript() []string {
	all := append([]string{}, v.scrollback...)
	for i, r := range v.screen {
		text := rowText(r, i == v.h-1 || !v.cont[i+1])
		if v.cont[i] && len(all) > 0 {
			all[len(all)-1] += text
		} else {
			all = append(all, text)
		}
	}
	for len(all) > 0 && all[len(all)-1] == "" {
		all = all[:len(all)-1]
	}
	return all
}
