package dirlease

import (
	"strings"
	"testing"

	"github.com/leasekit/leasekit/internal/require"
	"github.com/leasekit/leasekit/internal/statecas"
)

// A cached parse answers exactly as parsing does: the same claim for the
// same bytes and name, a refusal for the same bytes under another name,
// and a claim whose child owner the caller may change without changing
// what the next parse returns.
func TestParseFromTheCacheEqualsParsing(t *testing.T) {
	child := statecas.Owner{PID: 7, BootID: strings.Repeat("c", 64), ProcessStartID: strings.Repeat("d", 64),
		Hostname: "h", PIDNamespace: "pid:[1]"}
	claim := Claim{SchemaVersion: SchemaVersion, ID: fuzzID, Role: RoleRawWorking, Path: "/w/a", ParentPath: "/w",
		ParentIdentity: Identity{"1", "2", "3"}, DirectoryIdentity: Identity{"1", "4", "5"},
		Owner: statecas.Owner{PID: 1, BootID: strings.Repeat("a", 64), ProcessStartID: strings.Repeat("b", 64),
			Hostname: "h", PIDNamespace: "pid:[1]"},
		ChildOwner: &child, Phase: PhaseRunning, CreatedAtMs: 1, RecoverAfterMs: 2,
		Revision: "00000000-0000-4000-8000-000000000009", CreatedAtBootMs: NoBootTime}
	data := claim.Bytes()
	name := fuzzID + ".json"

	uncached, err := parseJSON(data, name, "/w/"+name)
	require.NoError(t, err)
	first, err := Parse(data, name, "/w/"+name)
	require.NoError(t, err)
	_, hit := cachedParse(data, name)
	require.True(t, hit, "a claim that parsed is remembered")
	second, err := Parse(data, name, "/w/"+name)
	require.NoError(t, err)
	require.Equal(t, uncached, first)
	require.Equal(t, uncached, second)

	second.ChildOwner.PID = 99
	third, err := Parse(data, name, "/w/"+name)
	require.NoError(t, err)
	require.Equal(t, 7, third.ChildOwner.PID, "a caller's change does not reach the cache")

	_, err = Parse(data, "00000000-0000-4000-8000-000000000002.json", "/w/other.json")
	require.ErrorIs(t, err, ErrCorrupt, "the same bytes under another name are refused, cached or not")
	_, err = Parse(append(append([]byte{}, data...), ' '), name, "/w/"+name)
	require.ErrorIs(t, err, ErrCorrupt, "other bytes are parsed, not looked up")
}

// Parse keeps nothing of the bytes it is given, cached or not: checkAlone
// reads every claim into one buffer, and the next read overwrites it.
func TestParseKeepsNoneOfItsBytes(t *testing.T) {
	claim := Claim{SchemaVersion: SchemaVersion, ID: "00000000-0000-4000-8000-00000000000b", Role: RoleRawWorking,
		Path: "/w/keep", ParentPath: "/w", ParentIdentity: Identity{"1", "2", "3"}, DirectoryIdentity: Identity{"1", "6", "7"},
		Owner: statecas.Owner{PID: 1, BootID: strings.Repeat("a", 64), ProcessStartID: strings.Repeat("b", 64),
			Hostname: "h", PIDNamespace: "pid:[1]"},
		Phase: PhasePreparing, CreatedAtMs: 1, RecoverAfterMs: 2,
		Revision: "00000000-0000-4000-8000-00000000000c", CreatedAtBootMs: NoBootTime}
	name := claim.ID + ".json"
	for _, pass := range []string{"parsed", "cached"} {
		buffer := claim.Bytes()
		parsed, err := Parse(buffer, name, "/w/"+name)
		require.NoError(t, err, pass)
		for i := range buffer {
			buffer[i] = 'z'
		}
		require.Equal(t, claim, parsed, pass)
	}
}
