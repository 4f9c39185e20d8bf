package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"time"
)

// Compose acts on the containers of one docker-compose project through
// the docker CLI (the containers are found by the labels compose gives
// them, so no compose binary is needed).
type Compose struct {
	Project string
	// Timeout bounds each docker command (default 60 s).
	Timeout time.Duration
}

// docker runs one docker command and returns its standard output.
func (c *Compose) docker(args ...string) (string, error) {
	d := c.Timeout
	if d == 0 {
		d = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, "docker", args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("docker %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// Available reports whether a Docker engine answers, as an error wrapping
// ErrUnsupported when none does.
func (c *Compose) Available() error {
	if _, err := exec.LookPath("docker"); err != nil {
		return unsupported("docker is not installed")
	}
	if _, err := c.docker("info", "--format", "{{.ServerVersion}}"); err != nil {
		return unsupported("no Docker engine answers: %v", err)
	}
	return nil
}

// Services returns the project's services and their container IDs
// (running or not).
func (c *Compose) Services() (map[string]string, error) {
	out, err := c.docker("ps", "-a", "--filter", "label=com.docker.compose.project="+c.Project,
		"--format", `{{.ID}} {{.Label "com.docker.compose.service"}}`)
	if err != nil {
		return nil, err
	}
	svc := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		id, name, ok := strings.Cut(strings.TrimSpace(line), " ")
		if ok && name != "" {
			svc[name] = id
		}
	}
	if len(svc) == 0 {
		return nil, fmt.Errorf("faults: compose project %q has no containers", c.Project)
	}
	return svc, nil
}

// Container returns the ID of service's container.
func (c *Compose) Container(service string) (string, error) {
	svc, err := c.Services()
	if err != nil {
		return "", err
	}
	id, ok := svc[service]
	if !ok {
		return "", fmt.Errorf("faults: compose project %q has no service %q", c.Project, service)
	}
	return id, nil
}

func (c *Compose) onContainer(service string, args ...string) error {
	id, err := c.Container(service)
	if err != nil {
		return err
	}
	_, err = c.docker(append(args, id)...)
	return err
}

// Kill kills service's container (SIGKILL).
func (c *Compose) Kill(service string) error {
	return c.onContainer(service, "kill", "--signal", "KILL")
}

// Start starts service's container (after Kill); a running one is left
// as it is.
func (c *Compose) Start(service string) error { return c.onContainer(service, "start") }

// Pause freezes every process of service's container.
func (c *Compose) Pause(service string) error { return c.onContainer(service, "pause") }

// Unpause thaws service's container.
func (c *Compose) Unpause(service string) error { return c.onContainer(service, "unpause") }

// Endpoint is a container's attachment to a network, kept to reconnect it.
type Endpoint struct {
	Network string
	IP      string
	Aliases []string
}

// inspect returns service's container state and its networks.
func (c *Compose) inspect(service string) (state string, eps []Endpoint, err error) {
	state, eps, _, err = c.inspectAll(service)
	return state, eps, err
}

// PublishedPorts returns the host ports service's container publishes.
func (c *Compose) PublishedPorts(service string) ([]string, error) {
	_, _, ports, err := c.inspectAll(service)
	return ports, err
}

func (c *Compose) inspectAll(service string) (state string, eps []Endpoint, ports []string, err error) {
	id, err := c.Container(service)
	if err != nil {
		return "", nil, nil, err
	}
	out, err := c.docker("inspect", id)
	if err != nil {
		return "", nil, nil, err
	}
	var info []struct {
		State struct {
			Status string
		}
		NetworkSettings struct {
			Ports    map[string][]struct{ HostIp, HostPort string }
			Networks map[string]struct {
				IPAddress string
				Aliases   []string
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &info); err != nil || len(info) != 1 {
		return "", nil, nil, fmt.Errorf("faults: docker inspect %s: %v", id, err)
	}
	for _, bindings := range info[0].NetworkSettings.Ports {
		for _, b := range bindings {
			if b.HostPort != "" && !slices.Contains(ports, b.HostPort) {
				ports = append(ports, b.HostPort)
			}
		}
	}
	sort.Strings(ports)
	for name, n := range info[0].NetworkSettings.Networks {
		eps = append(eps, Endpoint{Network: name, IP: n.IPAddress, Aliases: n.Aliases})
	}
	sort.Slice(eps, func(i, j int) bool { return eps[i].Network < eps[j].Network })
	return info[0].State.Status, eps, ports, nil
}

// State returns the container's status (running, paused, exited...).
func (c *Compose) State(service string) (string, error) {
	s, _, err := c.inspect(service)
	return s, err
}

// Networks returns service's container's networks.
func (c *Compose) Networks(service string) ([]Endpoint, error) {
	_, eps, err := c.inspect(service)
	return eps, err
}

// Disconnect disconnects service's container from every network it is
// on and returns them for Connect. Its published ports go too.
func (c *Compose) Disconnect(service string) ([]Endpoint, error) {
	id, err := c.Container(service)
	if err != nil {
		return nil, err
	}
	eps, err := c.Networks(service)
	if err != nil {
		return nil, err
	}
	for _, ep := range eps {
		if _, err := c.docker("network", "disconnect", "--force", ep.Network, id); err != nil {
			return eps, err
		}
	}
	return eps, nil
}

// Connect reconnects service's container to the networks Disconnect
// returned, with their aliases and, where Docker allows, the same address.
func (c *Compose) Connect(service string, eps []Endpoint) error {
	id, err := c.Container(service)
	if err != nil {
		return err
	}
	for _, ep := range eps {
		args := []string{"network", "connect"}
		for _, a := range ep.Aliases {
			if !strings.HasPrefix(id, a) { // docker adds the short ID itself
				args = append(args, "--alias", a)
			}
		}
		withIP := args
		if ep.IP != "" {
			withIP = append(append([]string(nil), args...), "--ip", ep.IP)
		}
		if _, err := c.docker(append(withIP, ep.Network, id)...); err != nil {
			// A network without a user-given subnet takes no --ip.
			if _, err2 := c.docker(append(args, ep.Network, id)...); err2 != nil {
				if strings.Contains(err2.Error(), "already exists") {
					continue
				}
				return fmt.Errorf("%v; without the address: %v", err, err2)
			}
		}
	}
	return nil
}
