package lease_test

import (
	"strings"
	"testing"

	"github.com/leasekit/leasekit/internal/require"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/leasetest"
)

// seedOwner is a schema-1 owner record for identity 1 as the original implementation would
// have it, with createdAt and the separator between members chosen by the
// caller.
func seedOwner(createdAt string) string {
	p := leasetest.Identity(1)
	return `{"schema":1,"generation":"legacy-gen","piSessionId":"s","piSessionFile":"/s/f.jsonl","pid":1,` +
		`"processStartIdentity":"` + p.StartTime + `","bootIdentity":null,"executable":"` + p.Executable +
		`","hostname":"` + p.Hostname + `","rootId":"` + rootID + `","createdAt":"` + createdAt + `"}` + "\n"
}

// Issue 19, item 9. docs/THREAT-MODEL.md said non-canonical and invalid
// UTF-8 records are refused; the code accepted both. The original implementation is the
// spec: its records are JSON.stringify output in insertion order (never
// canonical), so non-canonical JSON must be read, and the document was
// wrong there. Invalid UTF-8 is never written by the original implementation or the port, and
// decoding it replaces bytes with U+FFFD, so the record read is not the
// record on disk: there the document was right and the code is fixed.
func TestRecordEncodingAgainstTheSeed(t *testing.T) {
	holder := leasetest.Identity(7)
	cases := []struct {
		name    string
		entry   string
		content string
		corrupt bool
	}{
		{"seed owner in insertion order", "receiver.lock/owner.json", seedOwner("2025-06-01T10:00:00.000Z"), false},
		{"seed owner pretty-printed", "receiver.lock/owner.json",
			strings.ReplaceAll(seedOwner("2025-06-01T10:00:00.000Z"), `,"`, ",\n  \""), false},
		{"owner with invalid UTF-8", "receiver.lock/owner.json",
			strings.Replace(seedOwner("2025-06-01T10:00:00.000Z"), `"piSessionId":"s"`, "\"piSessionId\":\"s\xff\"", 1), true},
		{"owner with a truncated UTF-8 sequence", "receiver.lock/owner.json",
			strings.Replace(seedOwner("2025-06-01T10:00:00.000Z"), `"piSessionId":"s"`, "\"piSessionId\":\"s\xe2\x82\"", 1), true},
		{"guard with invalid UTF-8", "receiver.lifecycle.guard.json",
			strings.Replace(guardJSON(holder, "g"), `"generation":"g"`, "\"generation\":\"g\xc0\xaf\"", 1), true},
		{"epoch with invalid UTF-8", "receiver.epoch.json", "{\"epoch\":1,\"schema\":1,\"\xff\":0}", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			initNamespace(t, w)
			w.write(tc.entry, tc.content)
			before := w.tree()
			result := w.acquire(w.manager(leasetest.Identity(2)))
			if !tc.corrupt {
				require.Equal(t, lease.Held, result.Kind, "%+v", result)
				require.Equal(t, "legacy-gen", result.Owner.Generation)
				return
			}
			require.Equal(t, lease.Refused, result.Kind, "%+v", result)
			require.Contains(t, result.Refusal.Diagnostic, "not valid UTF-8")
			require.NotEqual(t, lease.HumanNone, result.Refusal.Human)
			require.Equal(t, before, w.tree(), "a refused record is left as found")
		})
	}
}

// Issue 19, item 12: the original implementation checked createdAt with Date.parse, which
// takes every form of ECMAScript's Date Time String Format, date-only
// ones included. A schema-1 record must be read the same way; the forms
// outside that format (V8's legacy fallbacks) stay refused. Schema-2
// records are the port's own and keep RFC 3339. A time value outside the
// Date range (±8.64e15 ms) is NaN to Date.parse, so it is refused too.
func TestSeedTimestampsAreReadAsDateParseReadsThem(t *testing.T) {
	accepted := []string{"2025-01-02", "2025-01", "2025", "+002025-01-02", "-000001-01-01", "2025-01-02T10:00",
		"2025-01-02T10:00Z", "2025-01-02T10:00:59", "2025-01-02T10:00:00.5", "2025-01-02T10:00:00.123456Z",
		"2025-01-02T23:59:59.999+23:59", "2025-01-02T24:00", "2025-01-02T24:00:00.000Z", "2025T10:00Z",
		"2025-02-30", "2025-06-01T10:00:00.000Z", "2025-06-01T10:00:00+02:00",
		// the ends of the ECMAScript Date range (±8.64e15 ms), inclusive
		"+275760-09-13", "+275760-09-13T00:00:00.000Z", "+275760-09-13T00:00:00.0009Z", "+275760-09-13T01:00+01:00",
		"-271821-04-20", "-271821-04-20T00:00Z", "-271821-04-19T23:00-01:00"}
	refused := []string{"Jan 2 2025", "2025-1-2", "2025-13-01", "2025-00-01", "2025-01-00", "2025-01-32",
		"2025-01-02 10:00", "2025-01-02t10:00Z", "2025-01-02T10", "2025-01-02T10Z", "2025-01-02T10:60",
		"2025-01-02T10:00:60Z", "2025-01-02T24:00:01Z", "2025-01-02T24:00:00.001Z", "2025-01-02T10:00:00.Z",
		"2025-01-02T10:00+24:00", "2025-01-02T10:00+0100", "2025-01-02+01:00", "-000000-01-01", "  2025-01-02",
		"20250102", "x",
		// outside the Date range: Date.parse is NaN (issue 29 item 9: accepted before)
		"+275761-01-01", "+275760-09-13T00:00:00.001Z", "+275760-09-12T24:00:00.001", "+275760-09-31",
		"+275760-09-13T00:00-00:01", "-271821-04-19", "-271821-04-19T23:59:59.999Z", "-271821-04-20T00:00+00:01",
		"+999999-12-31", "-999999-01-01"}
	check := func(t *testing.T, createdAt string, want lease.AcquireKind) {
		t.Helper()
		w := newWorld(t)
		initNamespace(t, w)
		w.write("receiver.lock/owner.json", seedOwner(createdAt))
		result := w.acquire(w.manager(leasetest.Identity(2)))
		require.Equal(t, want, result.Kind, "createdAt %q: %+v", createdAt, result)
		if want == lease.Refused {
			require.Equal(t, lease.HumanCorruptOwner, result.Refusal.Human)
			require.Contains(t, result.Refusal.Diagnostic, "createdAt must be an ISO 8601 timestamp")
		}
	}
	for _, createdAt := range accepted {
		check(t, createdAt, lease.Held)
	}
	for _, createdAt := range refused {
		check(t, createdAt, lease.Refused)
	}
	t.Run("schema 2 keeps RFC 3339", func(t *testing.T) {
		w := newWorld(t)
		initNamespace(t, w)
		owner := strings.Replace(ownerJSON(leasetest.Identity(1), "g", 1), "2026-01-02T03:04:05.000Z", "2026-01-02", 1)
		w.write("receiver.lock/owner.json", owner)
		result := w.acquire(w.manager(leasetest.Identity(2)))
		require.Equal(t, lease.Refused, result.Kind)
		require.Equal(t, lease.HumanCorruptOwner, result.Refusal.Human)
	})
}
