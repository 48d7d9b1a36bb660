package client

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// spawn starts argv under a supervisor: this very program, re-executed
// (/proc/self/exe) in its supervisor mode (MaybeSupervise), with
// Pdeathsig SIGTERM, so that the client's process group is killed when the
// runner dies, even by SIGKILL. Without MaybeSupervise, the client is
// started directly.
//
// The supervisor stays in the runner's process group, and the client goes
// to a new one: the supervisor is thus in no group that clientlag watches
// (its own wake-ups are not the client's lag), and the client, between its
// fork and its setpgid, is in the runner's group, which clientlag never
// caches as anyone's.
//
// It reports to the runner on a pipe (fd 3): "pid N" once the client runs,
// "exit CODE" or "signal N" when it ends, "error MESSAGE" if it could not
// start it.
func spawn(argv, env []string, stdout, stderr *os.File) (*Proc, error) {
	if !supervisorReady {
		return spawnDirect(argv, env, stdout, stderr)
	}
	sup, statusR, err := startSupervisor(argv, env, stdout, stderr)
	if err != nil {
		return nil, err
	}
	reaped := make(chan ClientStatus, 1)
	go func() { reaped <- statusOf(sup.Wait()) }()
	lines := make(chan string, 2)
	go func() {
		defer statusR.Close()
		sc := bufio.NewScanner(statusR)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	pgid, gone, err := awaitStart(lines, reaped)
	if err != nil {
		if !gone {
			_ = sup.Kill()
			<-reaped
		}
		return nil, err
	}
	p := &Proc{Pgid: pgid, exited: make(chan ClientStatus, 1), killFn: func() { killGroup(pgid) }}
	go func() {
		l, ok := <-lines
		if !ok {
			// The supervisor died without a word (killed): what it
			// ended with is all there is.
			st := <-reaped
			reaped <- st
			p.exited <- st
			return
		}
		p.exited <- parseReport(l)
	}()
	p.reapFn = func() error { return reapSupervisor(sup, reaped) }
	return p, nil
}

// startSupervisor starts this very binary as the client's supervisor, with
// the write end of a status pipe as its file 3; it returns the read end.
// /proc/self/exe runs this binary even if its file was replaced or removed
// since (a rebuild during the run); argv[0] stays what the runner was
// started as (under testscript, the command's name).
func startSupervisor(argv, env []string, stdout, stderr *os.File) (*os.Process, *os.File, error) {
	const exe = "/proc/self/exe"
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	defer statusW.Close()
	c := exec.Command(exe, argv...)
	c.Args[0] = os.Args[0]
	c.Env = append(env, superviseEnv+"="+strconv.Itoa(os.Getpid()))
	c.Stdout, c.Stderr = stdout, stderr
	c.ExtraFiles = []*os.File{statusW}
	c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := c.Start(); err != nil {
		statusR.Close()
		return nil, nil, err
	}
	return c.Process, statusR, nil
}

// awaitStart waits for the supervisor's first report: the client's pid
// (its process group), or why it could not start it. gone is true when the
// supervisor has ended (and been reaped) already.
func awaitStart(lines <-chan string, reaped chan ClientStatus) (pgid int, gone bool, err error) {
	t := time.NewTimer(30 * time.Second)
	defer t.Stop()
	select {
	case l, ok := <-lines:
		if !ok {
			st := <-reaped
			return 0, true, fmt.Errorf("supervisor (%s re-executed) ended before starting the client: %s", os.Args[0], describeStatus(st))
		}
		pgid, err := parseStarted(l)
		return pgid, false, err
	case <-t.C:
		return 0, false, errors.New("supervisor did not start the client within 30s")
	}
}

// parseStarted reads the supervisor's first report: "pid N" or "error …".
func parseStarted(l string) (int, error) {
	switch {
	case strings.HasPrefix(l, "pid "):
		pgid, err := strconv.Atoi(strings.TrimPrefix(l, "pid "))
		if err != nil || pgid <= 0 {
			return 0, fmt.Errorf("supervisor: bad report %q", l)
		}
		return pgid, nil
	case strings.HasPrefix(l, "error "):
		return 0, errors.New(strings.TrimPrefix(l, "error "))
	}
	return 0, fmt.Errorf("supervisor: bad report %q", l)
}

// reapSupervisor waits for the supervisor once the client's group is
// killed: it stays while its group has live members (zombies do not
// count), so it ends at once.
func reapSupervisor(sup *os.Process, reaped chan ClientStatus) error {
	t := time.NewTimer(10 * time.Second)
	defer t.Stop()
	select {
	case st := <-reaped:
		reaped <- st
		return nil
	case <-t.C:
		_ = sup.Kill()
		<-reaped
		return fmt.Errorf("the client's supervisor (pid %d) did not end 10s after its group was killed: killed", sup.Pid)
	}
}

// parseReport reads the supervisor's "exit CODE" or "signal N".
func parseReport(l string) ClientStatus {
	kind, v, _ := strings.Cut(l, " ")
	n, err := strconv.Atoi(v)
	switch {
	case err != nil:
	case kind == "exit":
		return ClientStatus{Code: n}
	case kind == "signal":
		return ClientStatus{Code: -1, Signaled: true, Signal: syscall.Signal(n).String()}
	}
	return ClientStatus{Code: -1, Err: fmt.Errorf("supervisor: bad report %q", l)}
}

func describeStatus(st ClientStatus) string {
	switch {
	case st.Err != nil:
		return st.Err.Error()
	case st.Signaled:
		return "killed by signal " + st.Signal
	}
	return fmt.Sprintf("exit code %d", st.Code)
}

// supervise is the supervisor: it starts argv in a process group of its
// own, with its stdout and stderr, and reports on fd 3 (see spawn). When
// its parent, the runner, dies (Pdeathsig SIGTERM), or on SIGHUP, it kills
// the client's whole group with SIGKILL and exits. After the client
// exits it reports how, lets go of the client's outputs and stays until its
// group is empty (the runner kills it), then exits as the client did: the
// same exit code, or the same signal (when it is one a process can safely
// raise on itself; else 128+N). SIGINT and SIGQUIT (a Ctrl-C or Ctrl-\ at
// the terminal, which the runner handles) are ignored.
func supervise(argv []string) int {
	report := os.NewFile(3, "report")
	syscall.CloseOnExec(3)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT)
	// The runner may have died before Notify (then SIGTERM killed us) or
	// before the fork's Pdeathsig took hold (Go checks that), or between:
	if strconv.Itoa(os.Getppid()) != os.Getenv(superviseEnv) {
		return 143
	}
	os.Unsetenv(superviseEnv)
	if len(argv) == 0 {
		fmt.Fprintln(report, "error no client command")
		return 2
	}
	c := exec.Command(argv[0], argv[1:]...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		fmt.Fprintln(report, "error "+strings.ReplaceAll(err.Error(), "\n", " "))
		return 127
	}
	pgid := c.Process.Pid
	fmt.Fprintf(report, "pid %d\n", pgid)
	// Only the client's group holds its outputs now: the runner sees them
	// close when the client and what it started are done.
	if null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0); err == nil {
		for _, fd := range []int{0, 1, 2} {
			_ = syscall.Dup3(int(null.Fd()), fd, 0)
		}
		null.Close()
	}
	waited := make(chan ClientStatus, 1)
	go func() { waited <- statusOf(c.Process.Wait()) }()
	var st ClientStatus
	for done := false; !done; {
		select {
		case st = <-waited:
			done = true
		case s := <-sigs:
			if code, ok := stopOn(s, pgid); ok {
				return code
			}
		}
	}
	if st.Signaled {
		fmt.Fprintf(report, "signal %d\n", int(signalNumber(st)))
	} else {
		fmt.Fprintf(report, "exit %d\n", st.Code)
	}
	report.Close()
	// Stay while the group has live members: the runner may die before it
	// kills them. Zombies do not count (groupLive): an orphan that PID 1
	// never reaps held the supervisor, and the runner's reap of it, for
	// reapSupervisor's 10s, past Ctrl-C's grace period.
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for groupLive(pgid) {
		select {
		case <-tick.C:
		case s := <-sigs:
			if code, ok := stopOn(s, pgid); ok {
				return code
			}
		}
	}
	if st.Signaled {
		raise(signalNumber(st))
		return 128 + int(signalNumber(st))
	}
	return st.Code
}

// stopOn handles a signal to the supervisor: SIGTERM (the runner died) and
// SIGHUP kill the client's group and end the supervisor; others are
// ignored.
func stopOn(s os.Signal, pgid int) (int, bool) {
	if s != syscall.SIGTERM && s != syscall.SIGHUP {
		return 0, false
	}
	killGroup(pgid)
	return 128 + int(s.(syscall.Signal)), true
}

// signalNumber recovers the signal of a status (statusOf keeps its name).
func signalNumber(st ClientStatus) syscall.Signal {
	for n := syscall.Signal(1); n < 65; n++ {
		if n.String() == st.Signal {
			return n
		}
	}
	return syscall.SIGKILL
}

// raise ends this process with sig, if it is one the Go runtime lets end
// a process as the default action would (no stack dump, no core).
func raise(sig syscall.Signal) {
	switch sig {
	case syscall.SIGKILL, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGALRM, syscall.SIGUSR1, syscall.SIGUSR2:
	default:
		return
	}
	signal.Reset(sig)
	_ = syscall.Kill(os.Getpid(), sig)
	time.Sleep(time.Second) // the signal is on its way
}
