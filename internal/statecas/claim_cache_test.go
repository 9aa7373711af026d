package statecas

import "testing"

// TestClaimCacheAnswersAsParsing: whatever bytes come, in whatever order,
// the cached parse returns what parseClaim returns, and a refusal is never
// remembered.
func TestClaimCacheAnswersAsParsing(t *testing.T) {
	c := claim{ID: "11111111-1111-4111-8111-111111111111", Target: "/s/state.json"}
	c.Owner.PID, c.Owner.UID, c.Owner.StartTime, c.Owner.BootID = 42, 1000, "12345", "boot"
	c.Owner.ExecutableDev, c.Owner.ExecutableIno, c.Owner.Hostname, c.Owner.PIDNamespace = 2049, 77, "h", "4026531836"
	first := c.bytes()
	c.Owner.PID = 43
	second := c.bytes()
	corrupt := first[:len(first)-2]
	for i, data := range [][]byte{first, first, second, corrupt, corrupt, second, first} {
		got, gotErr := parseClaimCached(data)
		want, wantErr := parseClaim(data)
		if got != want || (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
			t.Fatalf("input %d: cached %+v, %v; parsed %+v, %v", i, got, gotErr, want, wantErr)
		}
		if i == 0 && gotErr != nil {
			t.Fatalf("the sample claim does not parse: %v", gotErr)
		}
	}
	if _, hit := claimCache.Lookup(corrupt); hit {
		t.Fatal("a refused claim was remembered")
	}
}
