package admission

import (
	"strings"
	"testing"

	"github.com/leasekit/leasekit/internal/require"
	"github.com/leasekit/leasekit/internal/statecas"
)

// A cached parse answers exactly as parsing does: the same claim for the
// same bytes, whatever the path, and a claim whose helper owner the caller
// may change without changing what the next parse returns.
func TestParseFromTheCacheEqualsParsing(t *testing.T) {
	owner := func(pid int, digit string) statecas.Owner {
		return statecas.Owner{PID: pid, BootID: strings.Repeat("a", 64), ProcessStartID: strings.Repeat(digit, 64),
			Hostname: "h", PIDNamespace: "pid:[1]"}
	}
	helper := owner(7, "c")
	claim := Claim{SchemaVersion: SchemaVersion, ID: "11111111-1111-4111-8111-111111111111", Owner: owner(1, "b"),
		HelperOwner: &helper, Phase: PhaseHelperActive, Revision: "22222222-2222-4222-8222-222222222222"}
	data := claim.Bytes()

	uncached, err := parseJSON(data, "/a/one")
	require.NoError(t, err)
	first, err := Parse(data, "/a/one")
	require.NoError(t, err)
	_, hit := cachedParse(data)
	require.True(t, hit, "a record that parsed is remembered")
	second, err := Parse(data, "/a/other")
	require.NoError(t, err)
	require.Equal(t, uncached, first)
	require.Equal(t, uncached, second)

	second.HelperOwner.PID = 99
	third, err := Parse(data, "/a/one")
	require.NoError(t, err)
	require.Equal(t, 7, third.HelperOwner.PID, "a caller's change does not reach the cache")

	_, err = Parse(append(append([]byte{}, data...), ' '), "/a/one")
	require.ErrorIs(t, err, ErrCorrupt, "other bytes are parsed, not looked up")
	_, err = Parse([]byte("{}\n"), "/a/one")
	require.ErrorIs(t, err, ErrCorrupt)
	_, hit = cachedParse([]byte("{}\n"))
	require.False(t, hit, "a refusal is not remembered")
}
