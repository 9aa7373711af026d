package statefile

import (
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
