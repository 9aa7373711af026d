package lease

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Bounds on the strings a caller hands in. Each is recorded (or compared
// with what is recorded) in a state file, so it must be text the record's
// strict decoder reads back as written, and small enough that the record
// stays far under its byte bound (ownerBytesMax): a record the decoder
// refuses would make a lease this call just took read as corrupt.
const (
	// requestTextBytesMax bounds SessionID, SessionFile, a generation and
	// an intent path: PATH_MAX on Linux, far above a UUID.
	requestTextBytesMax = 4096
	// rootIDBytesMax bounds Config.RootID, recorded in every owner.
	rootIDBytesMax = 1024
)

// checkText refuses what a state file cannot carry as written: invalid
// UTF-8 (JSON encoding would replace it, and the record would not read back
// as the request), NUL (no path or name holds one; a C reader of the record
// would stop at it), and strings over maxBytes. what names the argument in
// the refusal, which quotes at most a prefix of it.
func checkText(what, value string, maxBytes int) string {
	switch {
	case len(value) > maxBytes:
		return fmt.Sprintf("%s is %d bytes, over the %d-byte bound", what, len(value), maxBytes)
	case !utf8.ValidString(value):
		return fmt.Sprintf("%s %s is not valid UTF-8", what, quotedPrefix(value))
	case strings.IndexByte(value, 0) >= 0:
		return fmt.Sprintf("%s %s holds a NUL byte", what, quotedPrefix(value))
	}
	return ""
}

// quotedPrefix quotes at most the first 64 bytes of value, so that a
// refusal of a huge argument stays one readable line.
func quotedPrefix(value string) string {
	const shown = 64
	if len(value) <= shown {
		return fmt.Sprintf("%q", value)
	}
	return fmt.Sprintf("%q...", value[:shown])
}

// checkGeneration refuses a generation no record can hold: Release,
// WithCurrentLease and ForceReclaim compare it with a recorded one, so such
// a value can only be a caller's mistake, and saying so beats "not owner".
func checkGeneration(generation string) error {
	if generation == "" {
		return &RequestError{"lease generation is required"}
	}
	if problem := checkText("lease generation", generation, requestTextBytesMax); problem != "" {
		return &RequestError{problem}
	}
	return nil
}
