package lease

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/leasekit/leasekit/internal/fspath"
	"github.com/leasekit/leasekit/internal/statefile"
)

// scanIntents reads every reclaim intent. Stale intents (their reclaimer
// died mid-reclaim) are removed; clear is false while any live one exists.
// A corrupt, remote or uninspectable intent is a lifecycle-unverifiable
// refusal, since its writer may be about to move a guard.
func (m *Manager) scanIntents(c *call) (refusal Refusal, clear bool, err error) {
	entries, err := m.fs.ReadDir(m.reclaimsPath())
	if err != nil {
		return Refusal{}, false, fmt.Errorf("lease: listing lifecycle reclaim intents: %w", err)
	}
	clear = true
	for _, entry := range entries {
		if !strings.HasPrefix(entry.Name, intentPrefix) || !strings.HasSuffix(entry.Name, intentSuffix) {
			continue
		}
		file := fspath.Join(m.reclaimsPath(), entry.Name)
		read, err := m.readGuardFile(file, "receiver lifecycle reclaim intent", c.uid)
		if err != nil {
			return Refusal{}, false, err
		}
		if !read.present {
			continue
		}
		if read.corrupt != "" {
			return unverifiable("lifecycle reclaim intent is corrupt: "+read.corrupt, HumanCorruptIntent), false, nil
		}
		state := m.classify(read.guard.Identity, read.guard.legacy(), c.current)
		switch state.Kind {
		case OwnerStale:
			if err := m.removeStaleIntent(file); err != nil {
				return Refusal{}, false, err
			}
		case OwnerRemote, OwnerUnknown:
			return verdictRefusal(state, "lifecycle reclaim intent", file, read.guard, c.current), false, nil
		case OwnerLive:
			clear = false
		}
	}
	return Refusal{}, clear, nil
}

func (m *Manager) removeStaleIntent(file string) error {
	if err := m.fs.Remove(file); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("lease: removing a stale reclaim intent: %w", err)
	}
	return statefile.SyncDir(m.fs, m.reclaimsPath())
}
