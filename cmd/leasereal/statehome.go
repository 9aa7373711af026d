package main

import (
	"errors"
	"fmt"

	"github.com/leasekit/leasekit/lease"
)

// The admission and dirlease engines never create their state home: it
// must exist, private to this user. Its absence reaches the CLI as the
// engine's failure of the home's lstat, which alone would read as an I/O
// error (exit 4); stateHomeFS types it, so every admission and dirlease
// command refuses a missing state home (exit 3) and says how to create it.

// errStateHomeMissing is the refusal of a state home that does not exist.
type errStateHomeMissing struct {
	home string
	err  error // the lstat's
}

func (e *errStateHomeMissing) Error() string {
	return fmt.Sprintf("state home %s does not exist; leasereal never creates it: create it as a directory private "+
		"to this user, mode 0700 (mkdir -m 700 %s)", e.home, e.home)
}

func (e *errStateHomeMissing) Unwrap() error { return e.err }

// stateHomeMissing reports the missing state home err names, if any.
func stateHomeMissing(err error) (*errStateHomeMissing, bool) {
	var missingHome *errStateHomeMissing
	return missingHome, errors.As(err, &missingHome)
}

// stateHomeFS is the engines' filesystem, whose Lstat of the state home
// itself types a missing home.
type stateHomeFS struct {
	lease.FS
	home string
}

func (f stateHomeFS) Lstat(name string) (lease.FileInfo, error) {
	info, err := f.FS.Lstat(name)
	if name == f.home && missing(err) {
		return info, &errStateHomeMissing{home: f.home, err: err}
	}
	return info, err
}
