package leasecli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/leasekit/leasekit/lease"
)

// quarantinedRecordMax bounds the bytes read of one quarantined owner.json
// (the engine's records are well under 1 KiB).
const quarantinedRecordMax = 64 << 10

// QuarantinedTreeRuns judges the owners the engine reclaimed, whose
// records it keeps in the namespace's quarantine/: the first whose command
// tree still runs, if any. A run whose acquire reclaimed an owner with a
// running tree holds the lease until that tree exits (ReclaimedTreeRuns);
// if that run is killed first, the lease's record names the killed run,
// whose own group is empty, and only the quarantined record still names
// the running tree. Records that cannot be read or parsed name no tree
// (the engine reports them where it meets them).
func QuarantinedTreeRuns(fsys lease.FS, namespace string, self lease.ProcessIdentity, inspector lease.Inspector, groups Groups) (lease.Owner, TreeVerdict, error) {
	dir := namespace + "/quarantine"
	entries, err := fsys.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return lease.Owner{}, TreeVerdict{}, nil
	}
	if err != nil {
		return lease.Owner{}, TreeVerdict{}, fmt.Errorf("leasecli: reading %s: %w", dir, err)
	}
	for _, entry := range entries {
		if entry.Type&fs.ModeDir == 0 || !strings.HasPrefix(entry.Name, "receiver.") {
			continue
		}
		owner, ok, err := readQuarantinedOwner(fsys, dir+"/"+entry.Name+"/owner.json")
		if err != nil {
			return lease.Owner{}, TreeVerdict{}, err
		}
		if !ok {
			continue
		}
		verdict, err := HolderTreeRuns(owner, self, inspector, groups)
		if err != nil || verdict.Runs {
			if verdict.Runs {
				verdict.Why = fmt.Sprintf("reclaimed owner (pid %d, quarantine/%s) is gone but its process group %d still runs: its command's descendants hold the lease",
					owner.PID, entry.Name, owner.PID)
			}
			return owner, verdict, err
		}
	}
	return lease.Owner{}, TreeVerdict{}, nil
}

// quarantinedOwner is the part of an owner record a tree is judged by.
type quarantinedOwner struct {
	Generation           string  `json:"generation"`
	PID                  int     `json:"pid"`
	ProcessStartIdentity string  `json:"processStartIdentity"`
	BootIdentity         *string `json:"bootIdentity"`
	PIDNamespace         *string `json:"pidNamespace"`
	Hostname             string  `json:"hostname"`
}

// readQuarantinedOwner reads one quarantined owner.json: false when it is
// gone or is not an owner record (too large, not JSON, no identity); an
// error when it cannot be read (an unread record may name a running tree).
func readQuarantinedOwner(fsys lease.FS, name string) (lease.Owner, bool, error) {
	f, err := fsys.OpenFile(name, lease.O_RDONLY|lease.O_NOFOLLOW, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return lease.Owner{}, false, nil
	}
	if err != nil {
		return lease.Owner{}, false, fmt.Errorf("leasecli: reading a reclaimed owner: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, quarantinedRecordMax+1))
	if err != nil {
		return lease.Owner{}, false, fmt.Errorf("leasecli: reading a reclaimed owner: %w", err)
	}
	var record quarantinedOwner
	if len(data) > quarantinedRecordMax || json.Unmarshal(data, &record) != nil || record.PID <= 0 ||
		record.BootIdentity == nil || record.PIDNamespace == nil {
		return lease.Owner{}, false, nil
	}
	return lease.Owner{Generation: record.Generation, PID: record.PID, ProcessStartIdentity: record.ProcessStartIdentity,
		BootIdentity: *record.BootIdentity, PIDNamespace: *record.PIDNamespace, Hostname: record.Hostname}, true, nil
}
