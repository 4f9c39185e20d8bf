package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
)

// pingNode sends PING (after AUTH when a password is given) and expects
// +PONG. It speaks raw RESP so the binary needs no client library.
func pingNode(ctx context.Context, addr, pass string) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	rd := bufio.NewReader(conn)
	if pass != "" {
		fmt.Fprintf(conn, "*2\r\n$4\r\nAUTH\r\n$%d\r\n%s\r\n", len(pass), pass)
		line, err := rd.ReadString('\n')
		if err != nil {
			return err
		}
		if !strings.HasPrefix(line, "+OK") {
			return fmt.Errorf("AUTH: %s", strings.TrimSpace(line))
		}
	}
	if _, err := conn.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
		return err
	}
	line, err := rd.ReadString('\n')
	if err != nil {
		return err
	}
	if strings.TrimSpace(line) != "+PONG" {
		return fmt.Errorf("unexpected reply %q", strings.TrimSpace(line))
	}
	return nil
}
