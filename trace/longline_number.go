package trace

import "strconv"

// maxSig is more significant digits than float64 parsing ever looks at.
const maxSig = 800

// numberForm is a number as 0.sig × 10^(point + exp).
type numberForm struct {
	neg, expNeg bool
	float       bool             // written with a fraction or an exponent
	sig         [maxSig + 1]byte // the first maxSig significant digits, and a 1 if more follow
	nsig        int
	point, exp  int64
}

func (n *numberForm) digit(c byte, frac bool) {
	switch {
	case n.nsig == 0 && c == '0':
		if frac {
			n.point--
		}
		return
	case n.nsig < maxSig:
		n.sig[n.nsig] = c
		n.nsig++
	case c != '0' && n.nsig == maxSig:
		n.sig[n.nsig] = '1'
		n.nsig++
	}
	if !frac && n.point < 1e12 {
		n.point++
	}
}

func (n *numberForm) append(b []byte) []byte {
	if n.nsig == 0 {
		return append(b, '0')
	}
	if n.neg {
		b = append(b, '-')
	}
	e := n.exp
	if n.expNeg {
		e = -e
	}
	e = min(max(e+n.point, -1e9), 1e9)
	if !n.float && e <= 19 {
		// An integer literal that int64 may hold stays one: readers take
		// it exactly, and "0.d…e16" as a float64, which rounds past 2^53
		// (found by FuzzLongLine). One written as a float stays a float.
		b = append(b, n.sig[:n.nsig]...)
		for range e - int64(n.nsig) {
			b = append(b, '0')
		}
		return b
	}
	b = append(append(b, "0."...), n.sig[:n.nsig]...)
	return strconv.AppendInt(append(b, 'e'), e, 10)
}
