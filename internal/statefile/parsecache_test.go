package statefile

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// A ParseCache returns what was remembered for exactly these bytes, keeps
// its own copy of them, and is safe across goroutines (run with -race).
func TestParseCacheRemembersByBytes(t *testing.T) {
	var cache ParseCache[int]
	buffer := []byte(`{"a":1}`)
	if _, hit := cache.Lookup(buffer); hit {
		t.Fatal("an empty cache answered")
	}
	cache.Remember(buffer, 1)
	if got, hit := cache.Lookup([]byte(`{"a":1}`)); !hit || got != 1 {
		t.Fatalf("Lookup = %d, %v; want 1, true", got, hit)
	}
	copy(buffer, `{"b":2}`)
	if _, hit := cache.Lookup(buffer); hit {
		t.Fatal("a change to the caller's buffer reached the cache")
	}
	var wait sync.WaitGroup
	for i := range 4 {
		wait.Go(func() {
			data := []byte{byte('0' + i)}
			for range 100 {
				cache.Remember(data, i)
				if got, hit := cache.Lookup(data); hit && got != i {
					t.Errorf("goroutine %d read %d", i, got)
				}
			}
		})
	}
	wait.Wait()
}

// Parse calls the parser once for bytes that parsed, and again every time
// for bytes that did not (a refusal is never remembered).
func TestParseCacheParseRemembersOnlyWhatParsed(t *testing.T) {
	var cache ParseCache[int]
	calls := 0
	parse := func(data []byte) (int, error) {
		calls++
		if data[0] == 'x' {
			return 0, errRefused
		}
		return len(data), nil
	}
	for range 3 {
		if got, err := cache.Parse([]byte("abc"), parse); err != nil || got != 3 {
			t.Fatalf("Parse = %d, %v; want 3, nil", got, err)
		}
	}
	for range 3 {
		if _, err := cache.Parse([]byte("xyz"), parse); err != errRefused {
			t.Fatalf("Parse of refused bytes = %v; want the refusal", err)
		}
	}
	if calls != 4 {
		t.Fatalf("the parser ran %d times; want 1 for the bytes that parsed and 3 for the refused", calls)
	}
}

var errRefused = errors.New("refused")

// parseSlot spreads records that differ in a few bytes anywhere (claims of
// one shape, a counter in one field) over the slots, whichever lane or
// tail the differing bytes fall in.
func TestParseSlotSpreadsSimilarRecords(t *testing.T) {
	for _, offset := range []int{0, 7, 8, 31, 100, 250, 294} {
		record := []byte(strings.Repeat(`{"id":"0000","phase":"preparing"}`, 9))
		slots := map[uint32]bool{}
		for i := range 512 {
			copy(record[offset:], fmt.Sprintf("%03d", i))
			slots[parseSlot(record)] = true
		}
		if len(slots) < 300 {
			t.Errorf("offset %d: 512 records took %d slots", offset, len(slots))
		}
	}
}
