package workkit

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/leasekit/leasekit/lease"
)

// DoneRecord is the durability oracle of engine records (the admission
// slot's file, the dirlease claim directory): whatever state of them the
// engine reported done must survive every later power loss.
//
// The oracle snapshots the file (through the ground-truth root view) each
// time an engine call returns done while no other call on the file is in
// flight: that state was made by calls that have all answered, the last of
// them with success, so the engine promised it. Any other return that
// leaves the file different from the snapshot (an error, a refusal that
// still wrote) spoils the snapshot until the next done return, and so does
// a hostile write (Spoil). At a power loss the file must equal the snapshot,
// unless a call was in flight when the power went (it may have written
// anything, durably or not) or the snapshot is spoiled: then the run says
// nothing, and the state the reboot left becomes the new snapshot (what
// survived a power loss is on disk).
type DoneRecord struct {
	// Name says what is judged, for messages.
	Name string
	// Read returns the records' state as the ground truth sees it (ok false
	// when it cannot be read, which spoils the judgement).
	Read     func() (state string, ok bool)
	inFlight int
	known    bool
	spoiled  bool
	state    string
}

// FileState is a Read for one file through a root view: its bytes, or
// "absent".
func FileState(root lease.FS, name string) func() (string, bool) {
	return func() (string, bool) {
		data, err := ReadRoot(root, name)
		switch {
		case err == nil:
			return stateFile + string(data), true
		case errors.Is(err, fs.ErrNotExist):
			return "absent", true
		}
		return "", false
	}
}

// FileState's and DirState's states are raw encodings, tagged by their
// first byte, that the oracle compares as they are and quotes only in a
// message (showState): the claim directory's state is read after every
// dirlease engine call, and quoting every claim there, and copying the
// quoted text, was most of the read. Two states are equal exactly when
// their quoted texts are, for file names without '=' (a claim directory's
// names are <uuid>.json): both encodings are one-to-one.
const (
	// stateFile is followed by the file's bytes.
	stateFile = "\x01"
	// stateDir is followed by each file's name and bytes, each after its
	// length (a uvarint).
	stateDir = "\x02"
)

// showState renders a state as messages quote it: a file's bytes as fmt's
// %q writes them, a directory's files as name=%q; each, anything else
// ("absent", a Read's own text) as it is.
func showState(state string) string {
	switch {
	case strings.HasPrefix(state, stateFile):
		return string(appendQuoted(nil, []byte(state[len(stateFile):])))
	case strings.HasPrefix(state, stateDir):
		rest, text := []byte(state[len(stateDir):]), []byte(nil)
		for len(rest) > 0 {
			var name, data []byte
			name, rest = cutPrefixed(rest)
			data, rest = cutPrefixed(rest)
			text = appendQuoted(append(append(text, name...), '='), data)
			text = append(text, ';')
		}
		return string(text)
	}
	return state
}

// cutPrefixed splits a uvarint-length-prefixed field off b.
func cutPrefixed(b []byte) (field, rest []byte) {
	n, size := binary.Uvarint(b)
	b = b[size:]
	return b[:n], b[n:]
}

// DirState is a Read for the files of one directory that keep pass
// (their names and bytes, in name order).
func DirState(root lease.FS, dir string, keep func(name string) bool) func() (string, bool) {
	return func() (string, bool) {
		entries, err := root.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return "absent", true
		}
		if err != nil {
			return "", false
		}
		b := []byte(stateDir)
		for _, e := range entries {
			if !keep(e.Name) {
				continue
			}
			data, err := ReadRoot(root, dir+"/"+e.Name)
			if err != nil {
				return "", false
			}
			b = binary.AppendUvarint(b, uint64(len(e.Name)))
			b = append(b, e.Name...)
			b = binary.AppendUvarint(b, uint64(len(data)))
			b = append(b, data...)
		}
		return string(b), true
	}
}

// UnlessChanged wraps a Read that is a function of one volume's names and
// bytes (FileState, DirState through a root view, which no fault reaches):
// while generations reports both unchanged since the last read, it returns
// that read's state again. The dirlease oracle reads the whole claim
// directory after every engine call, most of which changed nothing in it.
// A volume without generations (ok false) is read every time.
func UnlessChanged(read func() (string, bool), generations func() (names, data uint64, ok bool)) func() (string, bool) {
	var last struct {
		names, data uint64
		valid       bool
		state       string
		ok          bool
	}
	return func() (string, bool) {
		names, data, versioned := generations()
		if versioned && last.valid && last.names == names && last.data == data {
			return last.state, last.ok
		}
		state, ok := read()
		last.names, last.data, last.valid, last.state, last.ok = names, data, versioned, state, ok
		return state, ok
	}
}

// appendQuoted is strconv.AppendQuote(b, string(data)), the bytes that
// fmt's %q writes, with a fast path for the printable ASCII records are
// made of: strconv decodes and classifies rune by rune, and that was most
// of the claim-directory oracle's cost. strconv quotes each rune on its
// own, so the first byte that is not printable ASCII (the first that may
// start a longer rune) hands the rest to strconv.
func appendQuoted(b, data []byte) []byte {
	b = append(b, '"')
	for i, c := range data {
		if c < ' ' || c > '~' {
			open := len(b)
			b = strconv.AppendQuote(b, string(data[i:]))
			return append(b[:open], b[open+1:]...) // drop strconv's opening quote
		}
		if c == '"' || c == '\\' {
			b = append(b, '\\')
		}
		b = append(b, c)
	}
	return append(b, '"')
}

// Begin notes an engine call on the record starting.
func (d *DoneRecord) Begin() { d.inFlight++ }

// End notes an engine call returning; done says it reported success.
func (d *DoneRecord) End(done bool) {
	d.inFlight--
	if d.inFlight != 0 {
		return
	}
	state, ok := d.Read()
	switch {
	case !ok:
		d.spoiled = true
	case done:
		d.known, d.spoiled, d.state = true, false, state
	case state != d.state:
		d.spoiled = true
	}
}

// Spoil says the record was written by someone other than the engine.
func (d *DoneRecord) Spoil() { d.spoiled = true }

// AfterPowerLoss judges the record after a power loss of its host: judged
// reports whether the oracle had a promise to check, err a broken one.
// Every call in flight died with the power; the oracle starts over from the
// state on disk.
func (d *DoneRecord) AfterPowerLoss() (judged bool, err error) {
	state, ok := d.Read()
	judged = d.known && !d.spoiled && d.inFlight == 0 && ok
	if judged && state != d.state {
		err = fmt.Errorf("%s: the state the engine reported done (%s) did not survive a power loss: now %s",
			d.Name, showState(d.state), showState(state))
	}
	d.inFlight, d.known, d.spoiled, d.state = 0, ok, !ok, state
	return judged, err
}

// InFlight reports whether an engine call on the record is in flight.
func (d *DoneRecord) InFlight() bool { return d.inFlight > 0 }
