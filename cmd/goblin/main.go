// Command goblin holds Goblin's operator tools, apart from the server
// binary (goblind carries none of their code).
//
//	goblin drill [flags]   a failover drill against a running cluster
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	switch os.Args[1] {
	case "drill":
		os.Exit(cmdDrill(os.Args[2:]))
	case "-h", "--help", "help":
		usage()
	}
	fmt.Fprintf(os.Stderr, "goblin: unknown command %q\n", os.Args[1])
	usage()
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: goblin drill [flags]   (goblin drill -h for the flags)")
	os.Exit(2)
}
