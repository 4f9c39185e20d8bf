package wire

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
)

// CopyReply copies one whole RESP2 or RESP3 reply from rd to out, byte for
// byte, for tests that compare replies with redis-server's exactly.
func CopyReply(rd *bufio.Reader, out *bytes.Buffer) error {
	line, err := rd.ReadBytes('\n')
	out.Write(line)
	if err != nil {
		return err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return fmt.Errorf("%w: %q", ErrMalformed, line)
	}
	kind, body := line[0], string(line[1:len(line)-2])
	switch kind {
	case '+', '-', ':', ',', '_', '#', '(':
		return nil
	}
	n, err := strconv.Atoi(body)
	if err != nil {
		return fmt.Errorf("%w: %q", ErrMalformed, line)
	}
	switch kind {
	case '$', '=', '!':
		if n < 0 {
			return nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(rd, buf); err != nil {
			return err
		}
		out.Write(buf)
		return nil
	case '%', '|':
		n *= 2
		fallthrough
	case '*', '~', '>':
		for range n {
			if err := CopyReply(rd, out); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("%w: type %q", ErrMalformed, kind)
}
