package workkit

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"

	"github.com/leasekit/leasekit/lease"
)

// DoneRecord is the durability oracle of one engine record file (the
// admission slot, a dirlease claim): whatever state of the file the engine
// reported done must survive every later power loss.
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
	// Path is the record's path in the root view.
	Path     string
	inFlight int
	known    bool
	spoiled  bool
	present  bool
	data     []byte
}

// Begin notes an engine call on the record starting.
func (d *DoneRecord) Begin() { d.inFlight++ }

// End notes an engine call returning; done says it reported success.
func (d *DoneRecord) End(root lease.FS, done bool) {
	d.inFlight--
	if d.inFlight != 0 {
		return
	}
	present, data, ok := d.read(root)
	switch {
	case !ok:
		d.spoiled = true
	case done:
		d.known, d.spoiled, d.present, d.data = true, false, present, data
	case present != d.present || !bytes.Equal(data, d.data):
		d.spoiled = true
	}
}

// Spoil says the record was written by someone other than the engine.
func (d *DoneRecord) Spoil() { d.spoiled = true }

// AfterPowerLoss judges the record after a power loss of its host: judged
// reports whether the oracle had a promise to check, err a broken one.
// Every call in flight died with the power; the oracle starts over from the
// state on disk.
func (d *DoneRecord) AfterPowerLoss(root lease.FS) (judged bool, err error) {
	present, data, ok := d.read(root)
	judged = d.known && !d.spoiled && d.inFlight == 0 && ok
	if judged && (present != d.present || !bytes.Equal(data, d.data)) {
		err = fmt.Errorf("%s: the state the engine reported done (%s) did not survive a power loss: now %s",
			d.Path, describeRecord(d.present, d.data), describeRecord(present, data))
	}
	d.inFlight, d.known, d.spoiled, d.present, d.data = 0, ok, !ok, present, data
	return judged, err
}

// InFlight reports whether an engine call on the record is in flight.
func (d *DoneRecord) InFlight() bool { return d.inFlight > 0 }

func (d *DoneRecord) read(root lease.FS) (present bool, data []byte, ok bool) {
	data, err := ReadRoot(root, d.Path)
	switch {
	case err == nil:
		return true, data, true
	case errors.Is(err, fs.ErrNotExist):
		return false, nil, true
	}
	return false, nil, false
}

func describeRecord(present bool, data []byte) string {
	if !present {
		return "absent"
	}
	return fmt.Sprintf("%q", data)
}
