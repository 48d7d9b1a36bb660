package client

import (
	"io"
	"os"
	"sync"
	"time"
)

// MaybeSupervise must be called first thing in main (and in a TestMain of
// a test binary that runs external clients). In a process started as a
// client's supervisor (see StartClient; Linux only) it runs the supervisor
// and exits: it never returns. Elsewhere it returns at once, and tells the
// runner that this program can be re-executed as a supervisor: a program
// that does not call it starts its clients directly (a SIGKILL of the
// runner then leaves them running).
func MaybeSupervise() {
	supervisorReady = true
	if os.Getenv(superviseEnv) == "" {
		return
	}
	os.Exit(supervise(os.Args[1:]))
}

// supervisorReady is set by MaybeSupervise.
var supervisorReady bool

// superviseEnv selects the supervisor mode of the re-executed program; its
// value is the runner's pid, which the supervisor checks is its parent.
const superviseEnv = "RETRYLAB_INTERNAL_SUPERVISE"

// ClientStatus is how an external client ended.
type ClientStatus struct {
	Code     int    // exit code; -1 when signaled
	Signaled bool   // killed by a signal
	Signal   string // its name ("killed", "segmentation fault")
	Err      error  // the wait failed
}

// Proc is a started external client: its process group (0: none, on
// Windows), and its outputs copied to the run folder.
type Proc struct {
	Pgid    int
	exited  chan ClientStatus // receives once, when the client has exited
	killFn  func()            // SIGKILL the client's whole process group
	reapFn  func() error      // after the kill: wait for what started it
	outDone chan struct{}     // closed when stdout and stderr are drained
	outR    []*os.File
	once    sync.Once
}

func (p *Proc) Kill() { p.killFn() }

func (p *Proc) Reap() error {
	if p.reapFn == nil {
		return nil
	}
	return p.reapFn()
}

// Drain waits up to d for the client's stdout and stderr to be closed by
// every process that holds them (or until stop is closed), and reports
// whether they were. With d = 0
// it stops reading them at once (what a process in another session still
// writes is lost) and waits for the copies to end.
func (p *Proc) Drain(d time.Duration, stop <-chan struct{}) bool {
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-p.outDone:
			return true
		case <-t.C:
			return false
		case <-stop:
			return false
		}
	}
	select {
	case <-p.outDone:
		return true
	default:
	}
	p.once.Do(func() {
		for _, f := range p.outR {
			f.Close()
		}
	})
	<-p.outDone
	return false
}

// StartClient starts argv with env, its stdout and stderr copied to the
// given writers through pipes of its own (so that the runner, not
// exec.Cmd, decides how long to wait for them), in a process group of its
// own. On Linux, in a program that called MaybeSupervise, the client runs
// under a supervisor (see supervise) that kills its group when the runner
// dies, even by SIGKILL.
func StartClient(argv, env []string, stdout, stderr io.Writer) (*Proc, error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, err
	}
	p, err := spawn(argv, env, outW, errW)
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return nil, err
	}
	p.outR = []*os.File{outR, errR}
	p.outDone = make(chan struct{})
	var wg sync.WaitGroup
	for i, w := range []io.Writer{stdout, stderr} {
		wg.Go(func() {
			_, _ = io.Copy(w, p.outR[i])
		})
	}
	go func() {
		wg.Wait()
		for _, f := range p.outR {
			f.Close()
		}
		close(p.outDone)
	}()
	return p, nil
}
