package procfs

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"testing"

	"pgregory.net/rapid"
)

// parseUIDGeneral is ParseUID as first written (bytes.Lines, bytes.Fields,
// strconv.ParseUint): the reference its in-place fast path must match.
func parseUIDGeneral(data []byte) (int, error) {
	for line := range bytes.Lines(data) {
		rest, found := bytes.CutPrefix(line, []byte("Uid:"))
		if !found {
			continue
		}
		fields := bytes.Fields(rest)
		if len(fields) == 0 {
			break
		}
		uid, err := strconv.ParseUint(string(fields[0]), 10, 31)
		if err != nil {
			return 0, fmt.Errorf("status: Uid %q: %v", fields[0], err)
		}
		return int(uid), nil
	}
	return 0, errors.New("no Uid line")
}

// TestParseUIDFastEqualsGeneral holds ParseUID to the general parser, on
// edge cases and on random status files built from the pieces that matter
// (Unicode spaces, long and signed numbers, missing fields and lines).
func TestParseUIDFastEqualsGeneral(t *testing.T) {
	check := func(t interface{ Fatalf(string, ...any) }, data []byte) {
		uid, err := ParseUID(data)
		wantUID, wantErr := parseUIDGeneral(data)
		if uid != wantUID || fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Fatalf("%q: %d, %v; general %d, %v", data, uid, err, wantUID, wantErr)
		}
	}
	for _, data := range []string{
		"", "Uid:", "Uid:\n", "Uid:\t\n", "Uid:\t1000", "Uid:1000\t0", "Uid:\t0001\n", "Uid:\t999999999\n",
		"Uid:\t1000000000\n", "Uid:\t2147483647\n", "Uid:\t2147483648\n", "Uid:\t+5\n", "Uid:\t-1\n",
		"Uid:\t5x\n", "Uid:\u00a05\n", "Uid:\t5\u00a06\n", "Uid:\t5\u0085\n", "Uid:\t\xff5\n", "Uid:\t5\xff\n",
		"Name:\tUid: 0\nUid:\t7\n", "uid:\t3\nUid:\t4\n", "Uid:\nUid:\t4\n", "Uid:\t\v\f\r 12 0\n", goldenStatus,
	} {
		check(t, []byte(data))
	}
	pieces := []string{"Uid:", "Name:\t", "\t", " ", "\n", "\u00a0", "\u0085", "\xff", "0", "7", "1000",
		"2147483648", "99999999999", "-", "+", "x", ")"}
	rapid.Check(t, func(t *rapid.T) {
		var data []byte
		for range rapid.IntRange(0, 12).Draw(t, "pieces") {
			data = append(data, rapid.SampledFrom(pieces).Draw(t, "piece")...)
		}
		check(t, data)
	})
}
