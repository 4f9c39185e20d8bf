package faults

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// procState returns the state letter of /proc/PID/stat (R, S, T, Z...),
// or "" when the process does not exist.
func procState(pid int) string {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return ""
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 || i+2 >= len(raw) {
		return ""
	}
	return string(raw[i+2])
}

// alive reports whether pid is a process that has not exited (a zombie
// has).
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	s := procState(pid)
	return s != "" && s != "Z" && s != "X"
}

// Alive reports whether process pid exists and has not exited.
func Alive(pid int) bool { return alive(pid) }

// waitState polls until cond holds for pid's state or d passes.
func waitState(pid int, d time.Duration, cond func(string) bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond(procState(pid)) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Kill sends SIGKILL to pid and waits (up to 10 s) until it has exited.
// A child of the caller stays a zombie until the caller reaps it; that
// counts as exited.
func Kill(pid int) error {
	if pid <= 0 {
		return fmt.Errorf("faults: kill: bad pid %d", pid)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("faults: kill -9 %d: %w", pid, err)
	}
	if !waitState(pid, 10*time.Second, func(s string) bool { return s == "" || s == "Z" || s == "X" }) {
		return fmt.Errorf("faults: pid %d still alive 10 s after SIGKILL", pid)
	}
	return nil
}

// Pause sends SIGSTOP to pid and waits (up to 5 s) until it is stopped.
func Pause(pid int) error {
	if pid <= 0 {
		return fmt.Errorf("faults: pause: bad pid %d", pid)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return fmt.Errorf("faults: SIGSTOP %d: %w", pid, err)
	}
	if !waitState(pid, 5*time.Second, func(s string) bool { return s == "T" || s == "" || s == "Z" }) {
		return fmt.Errorf("faults: pid %d not stopped 5 s after SIGSTOP", pid)
	}
	return nil
}

// Resume sends SIGCONT to pid.
func Resume(pid int) error {
	if pid <= 0 {
		return fmt.Errorf("faults: resume: bad pid %d", pid)
	}
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("faults: SIGCONT %d: %w", pid, err)
	}
	return nil
}

// Command is how a process was started: enough to start it again.
type Command struct {
	Path string   // the executable
	Args []string // argv, Args[0] included
	Env  []string // environment, KEY=VALUE
	Dir  string   // working directory
}

// ReadCommand reads process pid's command line, environment and working
// directory from /proc (read it before killing the process).
func ReadCommand(pid int) (*Command, error) {
	base := filepath.Join("/proc", strconv.Itoa(pid))
	argv, err := os.ReadFile(filepath.Join(base, "cmdline"))
	if err != nil {
		return nil, fmt.Errorf("faults: command line of %d: %w", pid, err)
	}
	env, err := os.ReadFile(filepath.Join(base, "environ"))
	if err != nil {
		return nil, fmt.Errorf("faults: environment of %d: %w", pid, err)
	}
	dir, err := os.Readlink(filepath.Join(base, "cwd"))
	if err != nil {
		return nil, fmt.Errorf("faults: working directory of %d: %w", pid, err)
	}
	c := &Command{Args: splitNul(argv), Env: splitNul(env), Dir: dir}
	if len(c.Args) == 0 {
		return nil, fmt.Errorf("faults: pid %d has an empty command line (a kernel thread or a zombie)", pid)
	}
	// The executable file itself, unless it was replaced since (a rebuilt
	// binary): then argv[0] as the process's working directory resolves it.
	if exe, err := os.Readlink(filepath.Join(base, "exe")); err == nil && !strings.HasSuffix(exe, " (deleted)") {
		c.Path = exe
	} else if filepath.IsAbs(c.Args[0]) {
		c.Path = c.Args[0]
	} else if strings.Contains(c.Args[0], "/") {
		c.Path = filepath.Join(dir, c.Args[0])
	} else if p, err := exec.LookPath(c.Args[0]); err == nil {
		c.Path = p
	} else {
		return nil, fmt.Errorf("faults: cannot find the executable of %d (%s)", pid, c.Args[0])
	}
	return c, nil
}

func splitNul(b []byte) []string {
	b = bytes.TrimRight(b, "\x00")
	if len(b) == 0 {
		return nil
	}
	return strings.Split(string(b), "\x00")
}

// Start runs the command again, in a session of its own (a terminal's
// Ctrl-C or the caller's exit does not stop it), with stdout and stderr
// to out (an *os.File keeps the process writing after the caller exits).
// The caller waits for the returned command to reap it.
func (c *Command) Start(out io.Writer) (*exec.Cmd, error) {
	cmd := &exec.Cmd{Path: c.Path, Args: c.Args, Env: c.Env, Dir: c.Dir, Stdout: out, Stderr: out}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("faults: starting %s: %w", c.Path, err)
	}
	return cmd, nil
}
