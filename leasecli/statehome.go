package leasecli

import (
	"errors"
	"fmt"

	"github.com/leasekit/leasekit/lease"
)

// The admission and dirlease engines never create their state home: it
// must exist, private to this user. Its absence reaches a caller as the
// engine's failure of the home's lstat, which alone would read as an I/O
// error (leasereal's exit 4); StateHomeFS types it, so every admission and
// dirlease command refuses a missing state home (exit 3) and says how to
// create it. The admission campaign's operators sometimes type a state
// home that does not exist, and must meet this refusal.

// StateHomeMissingError is the refusal of a state home that does not exist.
type StateHomeMissingError struct {
	// Home is the state home's absolute path.
	Home string
	err  error // the lstat's
}

func (e *StateHomeMissingError) Error() string {
	return fmt.Sprintf("state home %s does not exist; leasereal never creates it: create it as a directory private "+
		"to this user, mode 0700 (mkdir -m 700 %s)", e.Home, e.Home)
}

func (e *StateHomeMissingError) Unwrap() error { return e.err }

// StateHomeMissing reports the missing state home err names, if any.
func StateHomeMissing(err error) (*StateHomeMissingError, bool) {
	var missingHome *StateHomeMissingError
	return missingHome, errors.As(err, &missingHome)
}

// StateHomeFS is fsys for an engine whose state home is home: its Lstat of
// home itself types a missing home. missing says which lstat errors mean
// the path does not exist: fs.ErrNotExist, and on the real OS ENOTDIR too
// (a home below a file), an errno this deterministic package cannot name.
func StateHomeFS(fsys lease.FS, home string, missing func(error) bool) lease.FS {
	return stateHomeFS{FS: fsys, home: home, missing: missing}
}

type stateHomeFS struct {
	lease.FS
	home    string
	missing func(error) bool
}

func (f stateHomeFS) Lstat(name string) (lease.FileInfo, error) {
	info, err := f.FS.Lstat(name)
	if name == f.home && err != nil && f.missing(err) {
		return info, &StateHomeMissingError{Home: f.home, err: err}
	}
	return info, err
}
