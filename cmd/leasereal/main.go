// Command leasereal is the thin real-OS binary over leasekit's engines: it
// runs the same lease, admission and dirlease code as the simulator, through
// lease/osenv. See docs/LEASEREAL.md for every subcommand, its JSON output
// and its exit codes.
//
//	leasereal acquire|release|inspect --dir D ...   the receiver lease
//	leasereal reclaim --dir D ...                   operator: every blocker into quarantine/
//	leasereal run [options] D CMD ARGS              flock(1), fenced and crash-safe
//	leasereal run -n D CMD ARGS                     drop-in for `flock -n FILE CMD`
//	leasereal run -w 10 D -c 'shell command'        drop-in for `flock -w 10 FILE -c ...`
//	leasereal admission inspect|run|quarantine ...  the export admission
//	leasereal dirlease recover|run ...              directory leases
//	leasereal dirlease inspect|quarantine ...       directory leases: operator
//	leasereal stress [--engine E] --procs N --ops M --kill-rate R  real processes, kill -9, checked histories (E: lease, admission, dirlease, run)
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/leasekit/leasekit/lease"
)

// Exit codes (docs/LEASEREAL.md). `run` passes the child's code through
// instead, once the child started.
const (
	exitOK       = 0 // acquired, released, inspected, stress clean
	exitConflict = 1 // held by a live owner, not the owner, stress violation
	exitUsage    = 2 // bad flags or arguments
	exitRefused  = 3 // the engine refused: an operator must act, or retry
	exitError    = 4 // an I/O or unexpected error
	// run only, after its command ended: the release found that the lease
	// had been taken (another owner, or none), or could not release it.
	exitLeaseLost      = 5
	exitReleaseRefused = 6
	// exitNoCommand is the shell's code for a command that cannot run.
	exitNoCommand = 127
)

// usageError is a command-line mistake (exit 2). usage is the help to
// print after it; empty means the whole usageText.
type usageError struct{ problem, usage string }

func (e *usageError) Error() string { return e.problem }

func usagef(format string, args ...any) error {
	return &usageError{problem: fmt.Sprintf(format, args...)}
}

// codeError carries an explicit exit code out of a subcommand.
type codeError struct {
	code int
	err  error
}

func (e *codeError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

const usageText = `usage:
  leasereal acquire  --dir D [--owner parent|self|PID] [--root-id R] [--session-id S] [--session-file F]
  leasereal release  --dir D --generation G [--root-id R]
  leasereal inspect  --dir D
  leasereal reclaim  --dir D [--force] [--generation G]... [--epoch-floor N [--epoch-floor-unproven]]   (operator: every blocker into quarantine/)
  leasereal run      [-n | -w SECONDS] [-E N] [-o] [--verbose] [--json] D CMD [ARGS...]   (as flock(1))
  leasereal run      [-n | -w SECONDS] [-E N] [-o] [--verbose] [--json] D -c 'shell command'
  leasereal run      [options] --dir D [--] CMD [ARGS...]      (leasereal run --help: every option)
  leasereal admission inspect    --state-home H
  leasereal admission run        --state-home H -- CMD [ARGS...]
  leasereal admission quarantine --state-home H [--sha256 X]           (operator)
  leasereal dirlease recover     --state-home H
  leasereal dirlease run         --state-home H --path P [-w SECS] [--recover-after DUR] -- CMD [ARGS...]
  leasereal dirlease inspect     --state-home H
  leasereal dirlease quarantine  --state-home H --claim NAME [--sha256 X] (operator; without --sha256 a dry run)
  leasereal stress   [--engine lease|admission|dirlease|run|dirlease-run] --procs N --ops M --kill-rate R [--seed S] [--work-dir W] [--no-inspect]
                     [--check-timeout D] [--quiesce-every D] [--compare-check] [--verbose] [--json]
exit codes: 0 ok, 1 held/not-owner/violation (run: -E N), 2 usage, 3 refused (operator or retry),
4 error; run passes the child's code through (128+N when a signal N killed it, 127 when it cannot
start), except 5 when the lease was lost while the command ran and 6 when the release was refused.
`

// readOnlyAdvice follows an EROFS: every lease call writes (the
// lifecycle guard, the owner record), where flock(1) only opens an
// existing lock file, so no lease command works on a read-only mount.
const readOnlyAdvice = "the lease's directory is on a read-only filesystem: a lease writes its records there " +
	"(flock only opens an existing file); remount it read-write or choose a --dir on a writable filesystem (e.g. under /run/lock)"

func main() {
	os.Exit(mainCode(os.Args[1:], os.Stdout, os.Stderr))
}

// mainCode runs one subcommand and maps its error to an exit code.
func mainCode(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText)
		return exitUsage
	}
	err := dispatch(args[0], args[1:], stdout, stderr)
	var usage *usageError
	var coded *codeError
	var refused *lease.RefusalError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &usage):
		help := usage.usage
		if help == "" {
			help = usageText
		}
		fmt.Fprintf(stderr, "leasereal: %v\n%s", usage, help)
		return exitUsage
	case errors.As(err, &coded):
		if coded.err != nil {
			fmt.Fprintf(stderr, "leasereal: %v\n", coded.err)
		}
		return coded.code
	case errors.As(err, &refused):
		fmt.Fprintf(stderr, "leasereal: %v\n", err)
		return exitRefused
	case errors.Is(err, syscall.EROFS):
		fmt.Fprintf(stderr, "leasereal: %v\n%s\n", err, readOnlyAdvice)
		return exitRefused
	}
	fmt.Fprintf(stderr, "leasereal: %v\n", err)
	return exitError
}

func dispatch(command string, args []string, stdout, stderr io.Writer) error {
	switch command {
	case "acquire":
		return cmdAcquire(args, stdout)
	case "release":
		return cmdRelease(args, stdout)
	case "inspect":
		return cmdInspect(args, stdout)
	case "run":
		return cmdRun(args, stdout, stderr)
	case "reclaim":
		return cmdReclaim(args, stdout)
	case "admission":
		return cmdAdmission(args, stdout, stderr)
	case "dirlease":
		return cmdDirlease(args, stdout, stderr)
	case "stress":
		return cmdStress(args, stdout, stderr)
	case "stress-worker":
		return cmdStressWorker(args)
	case "scenario-actor":
		return cmdScenarioActor(args, stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usageText)
		return nil
	}
	return usagef("unknown subcommand %q", command)
}
