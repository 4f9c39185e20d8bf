package faults

import (
	"bytes"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// chainPrefix starts the name of every chain this package creates; the
// creating process's PID follows, so a sweep can tell live chains from
// chains left by a process that died.
const chainPrefix = "GOBLIN-DRILL-"

// iptables runs one iptables (or ip6tables) command, waiting for the
// xtables lock, and returns its combined output.
func iptables(bin string, args ...string) (string, error) {
	return run(bin, append([]string{"-w", "5"}, args...)...)
}

// run runs a command and returns its combined output.
func run(bin string, args ...string) (string, error) {
	cmd := exec.Command(bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("%s %s: %v: %s", bin, strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return out.String(), nil
}

// chain is one filter-table chain of ours, jumped to from OUTPUT for
// packets leaving on lo.
type chain struct {
	bin  string // iptables or ip6tables
	name string
}

// newChain creates the chain and its jump. An existing chain of the same
// name is emptied first.
func newChain(bin, name string) (*chain, error) {
	if _, err := exec.LookPath(bin); err != nil {
		return nil, unsupported("%s is not installed", bin)
	}
	c := &chain{bin: bin, name: name}
	if _, err := iptables(bin, "-N", name); err != nil {
		if _, ferr := iptables(bin, "-F", name); ferr != nil {
			return nil, unsupported("cannot create an iptables chain (root or CAP_NET_ADMIN needed): %v", err)
		}
	}
	if _, err := iptables(bin, "-I", "OUTPUT", "1", "-o", "lo", "-j", name); err != nil {
		iptables(bin, "-X", name)
		return nil, unsupported("cannot add a jump to %s: %v", name, err)
	}
	return c, nil
}

// set replaces the chain's rules with rules (each one rule's arguments
// after "-A chain").
func (c *chain) set(rules [][]string) error {
	if _, err := iptables(c.bin, "-F", c.name); err != nil {
		return err
	}
	for _, r := range rules {
		if _, err := iptables(c.bin, append([]string{"-A", c.name}, r...)...); err != nil {
			return err
		}
	}
	return nil
}

// remove deletes the jump (every copy of it), the rules and the chain.
func (c *chain) remove() error {
	return removeChain(c.bin, c.name)
}

func removeChain(bin, name string) error {
	for i := 0; i < 16; i++ {
		if _, err := iptables(bin, "-D", "OUTPUT", "-o", "lo", "-j", name); err != nil {
			break
		}
	}
	iptables(bin, "-F", name)
	_, err := iptables(bin, "-X", name)
	return err
}

// sweepChains removes the chains of ours whose creating process is gone.
func sweepChains(bin string) {
	out, err := iptables(bin, "-S")
	if err != nil {
		return
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "-N" || !strings.HasPrefix(f[1], chainPrefix) || seen[f[1]] {
			continue
		}
		seen[f[1]] = true
		pidText, _, _ := strings.Cut(strings.TrimPrefix(f[1], chainPrefix), "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || alive(pid) {
			continue
		}
		removeChain(bin, f[1])
	}
}
