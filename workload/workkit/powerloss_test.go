package workkit

import "testing"

// TestTornJudgesWhatATearLeaves: the leftover watch's torn test on the
// outcomes of simfs's tear model (a record cut mid-write, zeros after; the
// size without the data) and on what is not torn.
func TestTornJudgesWhatATearLeaves(t *testing.T) {
	const record = `{"id":"7","owner":{"pid":12}}`
	cases := []struct {
		name string
		data string
		torn bool
	}{
		{"whole record", record, false},
		{"cut, size cut too", record[:9], true},
		{"cut, zeros to the size", record[:9] + "\x00\x00\x00\x00", true},
		{"the size, no data", "\x00\x00\x00\x00\x00\x00", true},
		{"a whole record, then zeros", record + "\x00\x00", true},
		{"a zeroed sector inside", record[:4] + "\x00\x00" + record[6:], true},
		{"not a record", "garbage", false},
		{"whitespace, then a cut record", "  " + record[:5], true},
		{"a JSON value that is not an object", "[1,2]", false},
	}
	for _, c := range cases {
		if got := torn([]byte(c.data)); got != c.torn {
			t.Errorf("%s: torn(%q) = %v, want %v", c.name, c.data, got, c.torn)
		}
	}
}
