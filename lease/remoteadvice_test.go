package lease

import (
	"fmt"
	"testing"
)

// TestRemoteAdviceIsItsFormat: the concatenated advice is what fmt writes
// from the format its comment gives, for hosts %q escapes and PIDs of any
// sign.
func TestRemoteAdviceIsItsFormat(t *testing.T) {
	for _, rec := range []ProcessIdentity{
		{Hostname: "host-b", PID: 42}, {Hostname: "", PID: 0}, {Hostname: "h\"\\\n\x00é\xff", PID: -7},
	} {
		want := fmt.Sprintf("%s %s names host %q (PID %d); it cannot be inspected from here and is never "+
			"reclaimed automatically. If that host is gone, or is this container rebuilt under a new "+
			"hostname, an operator must move %s into quarantine/", "receiver owner", "/ns/o.json", rec.Hostname, rec.PID, "/ns/o.json")
		if got := remoteAdvice("receiver owner", "/ns/o.json", rec); got != want {
			t.Fatalf("%+v:\n got %q\nwant %q", rec, got, want)
		}
	}
}
