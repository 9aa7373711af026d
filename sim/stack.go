package sim

import (
	"bytes"
	"regexp"
)

// stackArguments matches a frame's argument words at the end of its line,
// "(0xc000012345, 0x1)", "(0x0?, 0x2f76723db728?)", "({0x1234, 0x5},
// ...)" or, with an argument the compiler elided, "(0xc0001, {_, _}, _)",
// and stackGoroutine a goroutine's number, as in "goroutine 21
// [running]:" or "created by ... in goroutine 7".
var (
	stackArguments = regexp.MustCompile(`\([0-9a-fx?,{}._ ]+\)$`)
	stackGoroutine = regexp.MustCompile(`goroutine [0-9]+`)
)

// stableStack renders a panicking process's stack so that two runs of one
// seed give the same text: a process's panic is a finding, its message is
// in the trace, and replay compares traces bit for bit. The runtime's
// stack has a goroutine number and argument words (heap addresses) that
// differ from run to run; they are dropped, and the function names and
// file:line frames, which locate the bug, are kept.
func stableStack(stack []byte) []byte {
	lines := bytes.Split(bytes.TrimRight(stack, "\n"), []byte("\n"))
	out := make([][]byte, 0, len(lines))
	for _, line := range lines {
		line = stackGoroutine.ReplaceAll(line, []byte("goroutine"))
		line = stackArguments.ReplaceAll(line, []byte("(...)"))
		out = append(out, line)
	}
	return append(bytes.Join(out, []byte("\n")), '\n')
}
