package osenv

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"syscall"
)

// ProcessGroups reads the process groups of this process's PID namespace
// from /proc (leasecli.Groups).
type ProcessGroups struct {
	// Root is the proc filesystem's mount point; "" means /proc.
	Root string
}

// procEntriesMax bounds the /proc scan: far above any pid_max.
const procEntriesMax = 1 << 23

// GroupRuns reports whether process group pgid has a running member: a
// process whose /proc/PID/stat names pgid as its group (field 5) and that
// is not a zombie. Processes that exit during the scan are skipped.
func (g ProcessGroups) GroupRuns(pgid int) (bool, error) {
	root := g.Root
	if root == "" {
		root = "/proc"
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return false, err
	}
	if len(entries) > procEntriesMax {
		return false, fmt.Errorf("osenv: %s lists %d entries", root, len(entries))
	}
	for _, entry := range entries {
		if _, err := strconv.Atoi(entry.Name()); err != nil {
			continue
		}
		data, err := os.ReadFile(root + "/" + entry.Name() + "/stat")
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			continue
		}
		if err != nil {
			return false, err
		}
		member, running, ok := statGroup(data)
		if !ok {
			return false, fmt.Errorf("osenv: %s/%s/stat: unparsable", root, entry.Name())
		}
		if member == pgid && running {
			return true, nil
		}
	}
	return false, nil
}

// statGroup parses a /proc/PID/stat line's process group (field 5) and
// whether its state (field 3) is not zombie or dead. The command name
// (field 2) may hold spaces and parentheses: the fields follow its last ')'.
func statGroup(stat []byte) (pgid int, running, ok bool) {
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, false, false
	}
	fields := bytes.Fields(stat[end+1:])
	if len(fields) < 3 {
		return 0, false, false
	}
	pgid, err := strconv.Atoi(string(fields[2]))
	if err != nil {
		return 0, false, false
	}
	state := string(fields[0])
	return pgid, state != "Z" && state != "X" && state != "x", true
}
