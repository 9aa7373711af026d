package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/leasekit/leasekit/lease"
)

// `run`'s command line follows flock(1) (util-linux sys-utils/flock.c):
// getopt_long with "+" (options end at the first non-option, which is the
// lease directory), clustered short options (-nE 7, -w5), long options with
// "=" or a separate argument, and `D -c 'shell command'`. The options of
// the Go flag package that `run` used to take (-dir D, -json, -wait 1s)
// still work: a single-dash word that is exactly a long option's name is
// that long option.

// shellPath runs `-c` commands. flock uses $SHELL (falling back to
// /bin/sh); leasereal always uses /bin/sh, so the command means the same
// whoever runs it (docs/LEASEREAL.md, the flock table).
const shellPath = "/bin/sh"

// runOption is one option of `run`.
type runOption struct {
	short  byte     // 0 when there is no short form
	long   []string // long names, without "--"
	hasArg bool
	apply  func(f *runFlags, value string) error
}

// unsupported returns an option that exists in flock(1) but has no meaning
// for a lease: using it is a usage error naming the alternative.
func unsupported(short byte, long []string, hasArg bool, why string) runOption {
	return runOption{short: short, long: long, hasArg: hasArg, apply: func(*runFlags, string) error {
		return usagef("%s", why)
	}}
}

var runOptions = []runOption{
	{short: 'n', long: []string{"nonblock", "nonblocking", "nb"}, apply: func(f *runFlags, _ string) error {
		f.noWait = true
		return nil
	}},
	{short: 'w', long: []string{"timeout", "wait"}, hasArg: true, apply: func(f *runFlags, value string) error {
		wait, err := parseWait(value)
		f.wait = wait
		return err
	}},
	{short: 'E', long: []string{"conflict-exit-code"}, hasArg: true, apply: func(f *runFlags, value string) error {
		code, err := strconv.Atoi(value)
		if err != nil || code < 0 || code > 255 {
			return usagef("invalid exit code %q for -E/--conflict-exit-code (allowed values: 0-255)", value)
		}
		f.conflictCode = code
		return nil
	}},
	{short: 'o', long: []string{"close"}, apply: func(f *runFlags, _ string) error {
		f.closeBeforeExec = true // no descriptor to close: the lease is not an open file
		return nil
	}},
	{long: []string{"verbose"}, apply: func(f *runFlags, _ string) error {
		f.verbose = true
		return nil
	}},
	{long: []string{"json"}, apply: func(f *runFlags, _ string) error {
		f.jsonOut = true
		return nil
	}},
	{long: []string{"dir"}, hasArg: true, apply: func(f *runFlags, value string) error {
		f.common.dir = value
		return nil
	}},
	{long: []string{"root-id"}, hasArg: true, apply: func(f *runFlags, value string) error {
		f.common.rootID = value
		return nil
	}},
	{long: []string{"guard-wait"}, hasArg: true, apply: func(f *runFlags, value string) error {
		wait, err := time.ParseDuration(value)
		if err != nil || wait < 0 {
			return usagef("invalid --guard-wait %q (a duration such as 5s)", value)
		}
		f.common.guardWait = wait
		return nil
	}},
	{long: []string{"session-id"}, hasArg: true, apply: func(f *runFlags, value string) error {
		f.sessionID = value
		return nil
	}},
	{long: []string{"session-file"}, hasArg: true, apply: func(f *runFlags, value string) error {
		f.sessionFile = value
		return nil
	}},
	{short: 'h', long: []string{"help"}, apply: func(f *runFlags, _ string) error {
		f.help = true
		return nil
	}},
	unsupported('s', []string{"shared"}, false,
		"-s/--shared is not offered: a lease has exactly one owner; readers that may overlap need no lease (or flock -s)"),
	unsupported('x', []string{"exclusive"}, false,
		"-x/--exclusive is not needed: a lease is always exclusive; drop it"),
	unsupported('e', nil, false,
		"-e (exclusive) is not needed: a lease is always exclusive; drop it"),
	unsupported('u', []string{"unlock"}, false,
		"-u/--unlock is not offered: run releases the lease when its command ends; a lease taken by `leasereal acquire` is released by `leasereal release --dir D --generation G`"),
	unsupported('F', []string{"no-fork"}, false,
		"-F/--no-fork is not offered: leasereal stays alive while the command runs, to hold the lease and release it; drop -F"),
	unsupported(0, []string{"fd"}, true,
		"--fd N (file descriptor mode) is not offered: a lease is a directory, not a descriptor; run the commands under it: leasereal run -n D -c 'commands'"),
	unsupported(0, []string{"fcntl"}, false, "--fcntl is not offered: a lease is not a byte-range lock"),
	unsupported(0, []string{"start"}, true, "--start is not offered: a lease is not a byte-range lock"),
	unsupported(0, []string{"length"}, true, "--length is not offered: a lease is not a byte-range lock"),
}

// parseWait reads -w/--timeout/--wait: seconds as flock takes them
// ("10", "0.5"), or a Go duration ("300ms", "2m"). Zero is -n, as in flock.
func parseWait(value string) (time.Duration, error) {
	if seconds, err := strconv.ParseFloat(value, 64); err == nil {
		if seconds < 0 || seconds > waitSecondsMax {
			return 0, usagef("invalid timeout %q: 0 to %d seconds", value, waitSecondsMax)
		}
		return time.Duration(seconds * float64(time.Second)), nil
	}
	wait, err := time.ParseDuration(value)
	if err != nil || wait < 0 || wait > waitSecondsMax*time.Second {
		return 0, usagef("invalid timeout %q: seconds (10, 0.5) or a duration (300ms), 0 to %d seconds", value, waitSecondsMax)
	}
	return wait, nil
}

// waitSecondsMax bounds a wait: a year, far beyond any use, and well within
// time.Duration.
const waitSecondsMax = 366 * 24 * 3600

func findShort(name byte) *runOption {
	for i := range runOptions {
		if runOptions[i].short == name {
			return &runOptions[i]
		}
	}
	return nil
}

func findLong(name string) *runOption {
	for i := range runOptions {
		for _, long := range runOptions[i].long {
			if long == name {
				return &runOptions[i]
			}
		}
	}
	return nil
}

func isCommandOption(arg string) bool { return arg == "-c" || arg == "--command" }

// parseRunArgs parses `run`'s command line into flags and the command to
// run (with -c: /bin/sh -c STRING).
func parseRunArgs(args []string) (runFlags, []string, error) {
	f := runFlags{common: leaseFlags{rootID: defaultRootID, guardWait: lease.DefaultGuardWait}, conflictCode: exitConflict}
	i := 0
	var command []string
	for i < len(args) && command == nil && !f.help {
		arg := args[i]
		if arg == "--" {
			i++
			break
		}
		if arg == "-" || !strings.HasPrefix(arg, "-") {
			break
		}
		if isCommandOption(arg) {
			if f.common.dir == "" {
				return f, nil, usagef("%s comes after the lease directory: leasereal run [options] D -c 'command' (or --dir D -c 'command')", arg)
			}
			if len(args) != i+2 {
				return f, nil, usagef("%s requires exactly one command argument", arg)
			}
			command = []string{shellPath, "-c", args[i+1]}
			i = len(args)
			break
		}
		next, err := parseOption(&f, args, i)
		if err != nil {
			return f, nil, err
		}
		i = next
	}
	if f.help {
		return f, nil, nil
	}
	if command == nil {
		var err error
		if command, err = positionalCommand(&f, args[i:]); err != nil {
			return f, nil, err
		}
	}
	if f.noWait {
		f.wait = 0
	}
	return f, command, nil
}

// positionalCommand takes the lease directory (unless --dir gave it) and
// the command from what follows the options: D CMD ARGS..., D -c STRING,
// or (compatibility) D -- CMD ARGS.
func positionalCommand(f *runFlags, rest []string) ([]string, error) {
	if f.common.dir == "" {
		switch {
		case len(rest) == 0:
			return nil, usagef("run needs a lease directory and a command: leasereal run [options] D CMD [ARGS...]")
		case len(rest) == 1 && isDescriptorNumber(rest[0]):
			return nil, usagef("file descriptor mode (flock %s) is not offered: a lease is a directory, not a descriptor; run the commands under it: leasereal run -n D -c 'commands'", rest[0])
		}
		f.common.dir, rest = rest[0], rest[1:]
	}
	if len(rest) > 0 && rest[0] == "--" {
		rest = rest[1:]
	} else if len(rest) > 0 && isCommandOption(rest[0]) {
		if len(rest) != 2 {
			return nil, usagef("%s requires exactly one command argument", rest[0])
		}
		return []string{shellPath, "-c", rest[1]}, nil
	}
	if len(rest) == 0 {
		return nil, usagef("run needs a command: leasereal run [options] %s CMD [ARGS...] or %s -c 'command'", f.common.dir, f.common.dir)
	}
	return rest, nil
}

func isDescriptorNumber(arg string) bool {
	_, err := strconv.ParseUint(arg, 10, 31)
	return err == nil
}

// parseOption applies the option (or cluster of short options) at args[i]
// and returns the index of the next argument.
func parseOption(f *runFlags, args []string, i int) (int, error) {
	arg := args[i]
	if strings.HasPrefix(arg, "--") {
		return parseLong(f, args, i, arg[2:])
	}
	if name, _, _ := strings.Cut(arg[1:], "="); len(name) > 1 && findLong(name) != nil {
		return parseLong(f, args, i, arg[1:]) // Go flag style: -dir D, -json
	}
	cluster := arg[1:]
	for at := 0; at < len(cluster); at++ {
		option := findShort(cluster[at])
		if option == nil {
			return 0, usagef("unrecognized option '-%c'", cluster[at])
		}
		if !option.hasArg {
			if err := option.apply(f, ""); err != nil {
				return 0, err
			}
			continue
		}
		value := cluster[at+1:]
		if value == "" {
			if i+1 >= len(args) {
				return 0, usagef("option '-%c' requires an argument", cluster[at])
			}
			i++
			value = args[i]
		}
		return i + 1, option.apply(f, value)
	}
	return i + 1, nil
}

func parseLong(f *runFlags, args []string, i int, word string) (int, error) {
	name, value, hasValue := strings.Cut(word, "=")
	option := findLong(name)
	switch {
	case option == nil:
		return 0, usagef("unrecognized option '--%s'", name)
	case !option.hasArg && hasValue:
		return 0, usagef("option '--%s' doesn't allow an argument", name)
	case option.hasArg && !hasValue:
		if i+1 >= len(args) {
			return 0, usagef("option '--%s' requires an argument", name)
		}
		i++
		value = args[i]
	}
	return i + 1, option.apply(f, value)
}

// runUsage is `leasereal run --help`.
const runUsage = `usage:
  leasereal run [options] D CMD [ARGS...]
  leasereal run [options] D -c 'shell command'
  leasereal run [options] --dir D [--] CMD [ARGS...]
  leasereal run [options] --dir D -c 'shell command'
Acquire the lease in directory D (created if missing), run the command while holding it, release
it when the command ends, and exit with the command's code. Options as flock(1):
  -n, --nonblock, --nb          fail at once when the lease is held (also the default)
  -w, --timeout, --wait SECS    wait up to SECS seconds (or a duration: 300ms) for the holder
  -E, --conflict-exit-code N    exit code when the lease stays held (default 1)
  -c, --command STRING          run STRING with /bin/sh -c
  -o, --close                   accepted; there is no descriptor to close
      --verbose                 say on stderr how long the lease took, or why it failed
leasereal's own:
      --dir D                   the lease directory, when it is not the first argument
      --json                    print the acquire and release results as JSON lines on stderr
      --root-id R, --guard-wait DUR, --session-id S, --session-file F
Not offered (usage error, exit 2): -s, -x, -e, -u, -F, --fd, --fcntl, --start, --length, and
the file descriptor form (flock N).
`

// describeCommand is the command as --verbose names it.
func describeCommand(command []string) string {
	if len(command) == 3 && command[0] == shellPath && command[1] == "-c" {
		return fmt.Sprintf("%s -c %q", shellPath, command[2])
	}
	return command[0]
}
