package statecas

import (
	"strconv"
	"strings"
	"testing"

	"github.com/leasekit/leasekit/internal/statefile"
	"github.com/leasekit/leasekit/lease"
)

// StartDigest hashes the preimage its comment spells out, built in a
// stack buffer (and past it, for a long start time).
func TestStartDigestIsThePreimageHash(t *testing.T) {
	for _, p := range []lease.ProcessIdentity{
		{},
		{StartTime: "12345", ExecutableDev: 2049, ExecutableIno: 1 << 40, UID: 1000},
		{StartTime: strings.Repeat("9", 200), ExecutableDev: ^uint64(0), ExecutableIno: ^uint64(0), UID: -1},
	} {
		preimage := "leasekit-process-start-v1\n" + p.StartTime + "\n" +
			strconv.FormatUint(p.ExecutableDev, 10) + "\n" +
			strconv.FormatUint(p.ExecutableIno, 10) + "\n" +
			strconv.Itoa(p.UID) + "\n"
		want := statefile.SHA256Hex([]byte(preimage))
		if got := StartDigest(p); got != want {
			t.Fatalf("%+v: StartDigest %s, want %s", p, got, want)
		}
	}
}
