package leasesim

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/leasekit/leasekit/internal/mutant"
)

// exploreMutant runs `explore` under a catalog mutant: it builds this
// binary's main package with the mutant's overlay (as `leasesim mutants`
// does, buildMutant) and runs the build's explore with the same flags but
// --mutant, passing its output and exit code through. A line on stderr
// gives the build time; the exploration's own report gives the executions
// to detection (found at execution N).
func (c *Command) exploreMutant(name string, args []string, stdout, stderr io.Writer) int {
	root, err := moduleRoot(mainModule())
	if err != nil {
		return fail(stderr, err)
	}
	m, err := mutant.Load(root, name)
	if err != nil {
		return fail(stderr, err)
	}
	work, err := os.MkdirTemp("", "leasesim-explore-mutant-")
	if err != nil {
		return fail(stderr, err)
	}
	defer os.RemoveAll(work)
	started := time.Now()
	binary, err := buildMutant(root, c.mainPackage(), m, work)
	if err != nil {
		return fail(stderr, err)
	}
	fmt.Fprintf(stderr, "leasesim explore: mutant %s built in %.1fs (%s: %s)\n", name, time.Since(started).Seconds(), m.File, m.Bug)
	command := exec.Command(binary, append([]string{"explore"}, withoutFlag(args, "mutant")...)...)
	command.Stdout, command.Stderr = stdout, stderr
	err = command.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.ExitCode()
	}
	return fail(stderr, err)
}

// withoutFlag drops --name VALUE and --name=VALUE (one or two dashes).
func withoutFlag(args []string, name string) []string {
	var kept []string
	for i := 0; i < len(args); i++ {
		arg := strings.TrimLeft(args[i], "-")
		switch {
		case arg == name && strings.HasPrefix(args[i], "-"):
			i++
		case strings.HasPrefix(arg, name+"=") && strings.HasPrefix(args[i], "-"):
		default:
			kept = append(kept, args[i])
		}
	}
	return kept
}
