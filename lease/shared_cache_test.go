package lease

import "testing"

// TestSharedCacheAnswersAsParsing: a Manager that never parsed a record
// (its own cache empty) gets from the shared cache what parsing returns,
// and a refusal is never remembered; so do epoch counters.
func TestSharedCacheAnswersAsParsing(t *testing.T) {
	first := canonicalGuard(cacheTestGuard("g1"))
	second := canonicalGuard(cacheTestGuard("g2"))
	corrupt := first[:len(first)-1]
	for i, data := range [][]byte{first, first, second, corrupt, corrupt, second, first} {
		got, gotErr := (&Manager{}).parseGuardCached(data, "guard")
		want, wantErr := parseGuard(data, "guard")
		if got != want || (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
			t.Fatalf("guard input %d: cached %+v, %v; parsed %+v, %v", i, got, gotErr, want, wantErr)
		}
	}
	seven, eight := encodeEpoch(7), encodeEpoch(8)
	for i, data := range [][]byte{seven, seven, eight, seven[:len(seven)-2], seven, eight} {
		got, gotErr := parseEpochCached(data)
		want, wantErr := parseEpoch(data)
		if got != want || (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
			t.Fatalf("epoch input %d: cached %d, %v; parsed %d, %v", i, got, gotErr, want, wantErr)
		}
	}
	if _, hit := sharedEpochs.Lookup(seven[:len(seven)-2]); hit {
		t.Fatal("a refused epoch counter was remembered")
	}
}
