// Package resptest holds helpers for tests that speak raw RESP: reading
// one whole reply, of any RESP2 or RESP3 type, as its exact bytes.
package resptest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
)

// ReadReply copies one complete RESP2/RESP3 reply from rd to out.
func ReadReply(rd *bufio.Reader, out *bytes.Buffer) error {
	line, err := rd.ReadBytes('\n')
	out.Write(line)
	if err != nil {
		return err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return fmt.Errorf("malformed line %q", line)
	}
	n, _ := strconv.Atoi(string(line[1 : len(line)-2]))
	switch line[0] {
	case '$', '=', '!':
		if n < 0 {
			return nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(rd, buf); err != nil {
			return err
		}
		out.Write(buf)
	case '*', '~', '>', '%', '|':
		if line[0] == '%' || line[0] == '|' {
			n *= 2
		}
		for i := 0; i < n; i++ {
			if err := ReadReply(rd, out); err != nil {
				return err
			}
		}
	}
	return nil
}
