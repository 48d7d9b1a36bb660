package wire

import "testing"

// Every format's stream carries, piece by piece, the output tokens its
// usage reports in all; a JSON answer carries them in its one piece; an
// error carries none. The fleet's wastedOutputTokens adds up the pieces
// of a cut answer that left the mock.
func TestPieceTokens(t *testing.T) {
	t.Parallel()
	for _, prov := range Names() {
		p := params(prov)
		want := p.outputTokens()
		r := Stream(p)
		sum := 0
		for i := range r.Pieces {
			sum += r.PieceTokens(i)
		}
		if sum != want || want == 0 {
			t.Errorf("%s: stream pieces carry %d tokens, want its usage's %d", prov, sum, want)
		}
		p.NonStream = true
		if got := OK(p).PieceTokens(0); got != want {
			t.Errorf("%s: JSON answer carries %d tokens, want %d", prov, got, want)
		}
		p.Fault.Status = 529
		if got := Error(p).PieceTokens(0); got != 0 {
			t.Errorf("%s: an error carries %d tokens, want 0", prov, got)
		}
		if got := r.PieceTokens(-1) + r.PieceTokens(len(r.Pieces)); got != 0 {
			t.Errorf("%s: pieces out of range carry %d tokens", prov, got)
		}
	}
}
