// Package statefile holds the crash-safe state-file primitives every engine
// shares: canonical JSON bytes, bounded reads with strict schema decoding,
// atomic replace, create-only publish and directory fsync. Everything goes
// through the injected FS (env.FS, which lease.FS aliases too), so the same
// code runs on the kernel and in simfs, where the simulator crashes it at
// every step.
//
// Durability duties, in the order the functions below perform them:
//
//   - write the bytes to a fresh temp file in the destination directory,
//     fsync it (data durable BEFORE any name points at it);
//   - rename (replace) or rename-no-replace (create-only) it to the final
//     name, so the final name never shows an empty or torn file;
//   - fsync the directory (the new name durable BEFORE the caller reports
//     success).
package statefile

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// Canonical returns the canonical JSON encoding of v followed by one newline:
// object keys sorted in byte order (the originals' canonicalJson order for the
// ASCII keys every schema uses), no insignificant whitespace, no HTML
// escaping, numbers as written. The same record always
// has the same bytes, so a SHA-256 of them is a compare-and-swap token.
//
// The bytes of encoding/json are reordered in place when every string and
// key in them is plain printable ASCII (what the engines' records hold);
// anything else goes the long way (decode into a tree, re-encode sorted).
// Both ways give the same bytes: TestCanonicalFastEqualsTree and
// FuzzCanonicalFastEqualsTree hold them to it.
func Canonical(v any) ([]byte, error) {
	if out, ok := appendDirect(make([]byte, 0, 512), v, 0); ok {
		return append(out, '\n'), nil
	}
	raw, err := marshalNoEscape(v)
	if err != nil {
		return nil, fmt.Errorf("canonical JSON: %w", err)
	}
	out := make([]byte, 0, len(raw)+1)
	if out, ok := appendCanonicalFast(out, raw); ok {
		return append(out, '\n'), nil
	}
	return canonicalTree(raw)
}

// appendDirect appends the canonical form of v without encoding/json when v
// is built only of what the engines' records are built of: objects as
// map[string]any (keys plain ASCII), arrays as []any, plain ASCII strings,
// integers, booleans and nil. It reports false, with out unusable, for
// anything else, which then goes through encoding/json as before. The
// engines encode a record on every write and re-encode it on every read
// (Parse's canonical check); through encoding/json's reflection that was
// a fifth of a simulated admission run. Same bytes as the other ways:
// TestCanonicalFastEqualsTree and FuzzCanonicalFastEqualsTree.
func appendDirect(out []byte, v any, depth int) ([]byte, bool) {
	if depth > canonicalDepthMax {
		return out, false
	}
	switch value := v.(type) {
	case nil:
		return append(out, "null"...), true
	case bool:
		return strconv.AppendBool(out, value), true
	case string:
		return appendPlainString(out, value)
	case int:
		return strconv.AppendInt(out, int64(value), 10), true
	case int64:
		return strconv.AppendInt(out, value, 10), true
	case int32:
		return strconv.AppendInt(out, int64(value), 10), true
	case uint64:
		return strconv.AppendUint(out, value, 10), true
	case uint32:
		return strconv.AppendUint(out, uint64(value), 10), true
	case map[string]any:
		return appendDirectObject(out, value, depth)
	case []any:
		out = append(out, '[')
		for i, element := range value {
			if i > 0 {
				out = append(out, ',')
			}
			var ok bool
			if out, ok = appendDirect(out, element, depth+1); !ok {
				return out, false
			}
		}
		return append(out, ']'), true
	}
	return out, false
}

// appendDirectObject is appendDirect of an object: members in key order.
func appendDirectObject(out []byte, object map[string]any, depth int) ([]byte, bool) {
	keys := slices.Sorted(maps.Keys(object))
	out = append(out, '{')
	for i, key := range keys {
		if i > 0 {
			out = append(out, ',')
		}
		var ok bool
		if out, ok = appendPlainString(out, key); !ok {
			return out, false
		}
		out = append(out, ':')
		if out, ok = appendDirect(out, object[key], depth+1); !ok {
			return out, false
		}
	}
	return append(out, '}'), true
}

// appendPlainString appends s quoted when it is plain printable ASCII
// without quotes or backslashes (encoding/json then writes it as it is,
// with HTML escaping off); otherwise it reports false.
func appendPlainString(out []byte, s string) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' || c < 0x20 || c >= 0x7f {
			return out, false
		}
	}
	out = append(out, '"')
	out = append(out, s...)
	return append(out, '"'), true
}

// canonicalTree is the long way: raw decoded into a tree of maps and
// re-encoded with sorted keys.
func canonicalTree(raw []byte) ([]byte, error) {
	var tree any
	decoder := json.NewDecoder(bytes.NewReader(raw))
	decoder.UseNumber()
	if err := decoder.Decode(&tree); err != nil {
		return nil, fmt.Errorf("canonical JSON: re-decode: %w", err)
	}
	var out bytes.Buffer
	if err := writeCanonical(&out, tree); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// MustCanonical is Canonical for values the engine built itself; failing to
// encode one is a broken invariant.
func MustCanonical(v any) []byte {
	b, err := Canonical(v)
	if err != nil {
		panic(fmt.Sprintf("statefile: encoding an engine-built record: %v", err))
	}
	return b
}

// SHA256Hex is the lower-case hex SHA-256 of b.
func SHA256Hex(b []byte) string {
	digits := sha256HexDigits(b)
	return string(digits[:]) // one allocation, where hex.EncodeToString makes two
}

// HasSHA256Hex reports whether SHA256Hex(b) is digest, without allocating
// the digest: the compare-and-swap helpers judge every file they act on
// by it.
func HasSHA256Hex(b []byte, digest string) bool {
	digits := sha256HexDigits(b)
	return string(digits[:]) == digest
}

func sha256HexDigits(b []byte) [2 * sha256.Size]byte {
	sum := sha256.Sum256(b)
	var digits [2 * sha256.Size]byte
	hex.Encode(digits[:], sum[:])
	return digits
}

// IsSHA256Hex reports whether s is a SHA-256 as SHA256Hex writes it: 64
// lowercase hex digits. Operators confirm a quarantine with one.
func IsSHA256Hex(s string) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// IsUUIDv4 reports whether s is a lower-case version-4 UUID as the records
// hold them: 8-4-4-4-12 lower-case hex digits, version digit 4, variant
// digit 8, 9, a or b (the pattern
// ^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$,
// without a regular expression: the engines check one on every parse).
func IsUUIDv4(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		case 14:
			if c != '4' {
				return false
			}
		case 19:
			if c != '8' && c != '9' && c != 'a' && c != 'b' {
				return false
			}
		default:
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		}
	}
	return true
}

func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	encoder := json.NewEncoder(&buf)
	encoder.SetEscapeHTML(false)
	if err := encoder.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

func writeCanonical(out *bytes.Buffer, node any) error {
	switch value := node.(type) {
	case map[string]any:
		return writeCanonicalObject(out, value)
	case []any:
		out.WriteByte('[')
		for i, element := range value {
			if i > 0 {
				out.WriteByte(',')
			}
			if err := writeCanonical(out, element); err != nil {
				return err
			}
		}
		out.WriteByte(']')
		return nil
	default:
		b, err := marshalNoEscape(value)
		if err != nil {
			return fmt.Errorf("canonical JSON: %w", err)
		}
		out.Write(b)
		return nil
	}
}

func writeCanonicalObject(out *bytes.Buffer, object map[string]any) error {
	keys := slices.Sorted(maps.Keys(object))
	out.WriteByte('{')
	for i, key := range keys {
		if i > 0 {
			out.WriteByte(',')
		}
		encodedKey, err := marshalNoEscape(key)
		if err != nil {
			return fmt.Errorf("canonical JSON: key: %w", err)
		}
		out.Write(encodedKey)
		out.WriteByte(':')
		if err := writeCanonical(out, object[key]); err != nil {
			return err
		}
	}
	out.WriteByte('}')
	return nil
}

// appendCanonicalFast appends the canonical form of raw, the compact output
// of encoding/json, to out. It reports false, with out unusable, when raw
// holds anything the long way would rewrite: a string or key with an escape,
// a control or non-ASCII byte; a duplicate key; whitespace. Numbers,
// true/false/null and plain strings are copied as written, which is what the
// long way's re-encoding gives for them.
func appendCanonicalFast(out, raw []byte) ([]byte, bool) {
	out, rest, ok := appendValueFast(out, raw, 0)
	return out, ok && len(rest) == 0
}

// canonicalDepthMax bounds the recursion of the fast way; deeper values go
// the long way (no record is nested more than a few levels).
const canonicalDepthMax = 32

// appendValueFast appends the canonical form of the value at the start of
// raw and returns what follows it.
func appendValueFast(out, raw []byte, depth int) ([]byte, []byte, bool) {
	if len(raw) == 0 || depth > canonicalDepthMax {
		return out, raw, false
	}
	switch raw[0] {
	case '{':
		return appendObjectFast(out, raw, depth)
	case '[':
		out = append(out, '[')
		raw = raw[1:]
		if len(raw) > 0 && raw[0] == ']' {
			return append(out, ']'), raw[1:], true
		}
		for {
			var ok bool
			if out, raw, ok = appendValueFast(out, raw, depth+1); !ok || len(raw) == 0 {
				return out, raw, false
			}
			separator := raw[0]
			out, raw = append(out, separator), raw[1:]
			if separator == ']' {
				return out, raw, true
			}
			if separator != ',' {
				return out, raw, false
			}
		}
	case '"':
		end := plainStringEnd(raw)
		if end < 0 {
			return out, raw, false
		}
		return append(out, raw[:end]...), raw[end:], true
	default:
		end := 0
		for end < len(raw) && isLiteralByte(raw[end]) {
			end++
		}
		if end == 0 {
			return out, raw, false
		}
		return append(out, raw[:end]...), raw[end:], true
	}
}

// fastMember is one key of an object on the fast way: the key's bytes with
// their quotes, and the value's raw bytes.
type fastMember struct {
	key   []byte
	value []byte
}

// appendObjectFast appends the object at the start of raw with its members
// in key order.
func appendObjectFast(out, raw []byte, depth int) ([]byte, []byte, bool) {
	raw = raw[1:]
	var membersInline [20]fastMember
	members := membersInline[:0]
	for len(raw) > 0 && raw[0] != '}' {
		if len(members) > 0 {
			if raw[0] != ',' {
				return out, raw, false
			}
			raw = raw[1:]
		}
		end := plainStringEnd(raw)
		if end < 0 || len(raw) <= end || raw[end] != ':' {
			return out, raw, false
		}
		key := raw[:end]
		raw = raw[end+1:]
		valueEnd, ok := skipValue(raw)
		if !ok {
			return out, raw, false
		}
		members = append(members, fastMember{key: key, value: raw[:valueEnd]})
		raw = raw[valueEnd:]
	}
	if len(raw) == 0 {
		return out, raw, false
	}
	// A plain key's bytes are its decoded value: sort on them, without the
	// quotes (sort.Strings order, as the long way).
	slices.SortFunc(members, func(a, b fastMember) int {
		return cmp.Compare(string(a.key[1:len(a.key)-1]), string(b.key[1:len(b.key)-1]))
	})
	out = append(out, '{')
	for i, member := range members {
		if i > 0 {
			if string(members[i-1].key) == string(member.key) {
				return out, raw, false
			}
			out = append(out, ',')
		}
		out = append(out, member.key...)
		out = append(out, ':')
		var ok bool
		var rest []byte
		if out, rest, ok = appendValueFast(out, member.value, depth+1); !ok || len(rest) != 0 {
			return out, raw, false
		}
	}
	return append(out, '}'), raw[1:], true
}

// skipValue returns the length of the compact JSON value at the start of
// raw; strings must be plain. Containers are only matched by depth here:
// appendValueFast parses them properly.
func skipValue(raw []byte) (int, bool) {
	if len(raw) == 0 {
		return 0, false
	}
	switch raw[0] {
	case '"':
		end := plainStringEnd(raw)
		return end, end > 0
	case '{', '[':
		depth := 0
		for i := 0; i < len(raw); i++ {
			switch raw[i] {
			case '"':
				end := plainStringEnd(raw[i:])
				if end < 0 {
					return 0, false
				}
				i += end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
		}
		return 0, false
	default:
		end := 0
		for end < len(raw) && isLiteralByte(raw[end]) {
			end++
		}
		return end, end > 0
	}
}

// plainStringEnd returns the length of the string (with its quotes) at the
// start of raw, or -1 when it is not plain: every byte printable ASCII, no
// backslash.
func plainStringEnd(raw []byte) int {
	if len(raw) == 0 || raw[0] != '"' {
		return -1
	}
	for i := 1; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == '"':
			return i + 1
		case c == '\\' || c < 0x20 || c >= 0x7f:
			return -1
		}
	}
	return -1
}

// isLiteralByte reports whether c can be part of a number, true, false or
// null.
func isLiteralByte(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-' || c == '+' || c == '.' || c == 'E'
}

// CanonicalObject writes the canonical bytes of an object field by field,
// without encoding/json's reflection or a map to sort: what Canonical gives
// for a struct (or a map[string]any) of the same fields. The caller adds the
// keys in byte order (a key out of order, or not plain ASCII, is a
// programming error and panics), and nests objects with Open and Close.
// Every engine record is written with it (encoding a record as a
// map[string]any through Canonical costs about a tenth of a simulated
// admission or dirlease run); TestCanonicalObjectEqualsCanonical, the engines' golden
// tests and their map-encoding cross-checks hold it to Canonical's bytes.
type CanonicalObject struct {
	buf     []byte
	lastKey string
	// empty: the innermost open object has no member yet.
	empty bool
	// outer holds the last key of each enclosing object while a nested one
	// is open (depth of them), in the object itself: no allocation per Open.
	outer [canonicalNestMax]string
	depth int
}

// canonicalNestMax bounds how deep Open nests objects; records nest one
// level (an owner or an identity inside the record).
const canonicalNestMax = 4

// NewCanonicalObject starts an object; sizeHint is the expected length.
func NewCanonicalObject(sizeHint int) *CanonicalObject {
	c := &CanonicalObject{buf: make([]byte, 0, sizeHint), empty: true}
	c.buf = append(c.buf, '{')
	return c
}

func (c *CanonicalObject) key(key string) {
	if !plainKey(key) {
		panic(fmt.Sprintf("statefile: canonical key %q is not plain ASCII", key))
	}
	if !c.empty {
		if key <= c.lastKey {
			panic(fmt.Sprintf("statefile: canonical key %q after %q", key, c.lastKey))
		}
		c.buf = append(c.buf, ',')
	}
	c.empty = false
	c.lastKey = key
	c.buf = append(c.buf, '"')
	c.buf = append(c.buf, key...)
	c.buf = append(c.buf, '"', ':')
}

// Open starts an object-valued field: the fields added until the matching
// Close are its members, in their own key order.
func (c *CanonicalObject) Open(key string) {
	c.key(key)
	c.buf = append(c.buf, '{')
	if c.depth == canonicalNestMax {
		panic("statefile: canonical objects nested too deep")
	}
	c.outer[c.depth] = c.lastKey
	c.depth++
	c.lastKey, c.empty = "", true
}

// Close ends the object the last Open started.
func (c *CanonicalObject) Close() {
	if c.depth == 0 {
		panic("statefile: canonical Close without Open")
	}
	c.buf = append(c.buf, '}')
	c.depth--
	c.lastKey, c.empty = c.outer[c.depth], false
}

// Null adds a null field.
func (c *CanonicalObject) Null(key string) {
	c.key(key)
	c.buf = append(c.buf, "null"...)
}

// String adds a string field, quoted as Canonical quotes it.
func (c *CanonicalObject) String(key, value string) {
	c.key(key)
	c.buf = appendCanonicalString(c.buf, value)
}

// NullableString adds a string field, or null when value is "".
func (c *CanonicalObject) NullableString(key, value string) {
	if value == "" {
		c.Null(key)
		return
	}
	c.String(key, value)
}

// Int adds an integer field.
func (c *CanonicalObject) Int(key string, value int64) {
	c.key(key)
	c.buf = strconv.AppendInt(c.buf, value, 10)
}

// Uint adds an unsigned integer field.
func (c *CanonicalObject) Uint(key string, value uint64) {
	c.key(key)
	c.buf = strconv.AppendUint(c.buf, value, 10)
}

// Bytes closes the object and returns its bytes, newline included. The
// object must not be used afterwards.
func (c *CanonicalObject) Bytes() []byte {
	if c.depth != 0 {
		panic("statefile: canonical Bytes inside an open object")
	}
	out := append(c.buf, '}', '\n')
	c.buf = nil
	return out
}

// appendCanonicalString appends value as Canonical writes a string: plain
// ASCII as it is, anything else the long way (encoding/json's quoting,
// decoded and quoted again, as the tree way does: invalid UTF-8 becomes
// U+FFFD).
func appendCanonicalString(out []byte, value string) []byte {
	start := len(out)
	out = append(out, '"')
	out = append(out, value...)
	out = append(out, '"')
	if plainStringEnd(out[start:]) == len(out)-start {
		return out
	}
	raw, err := marshalNoEscape(value)
	if err != nil {
		panic(fmt.Sprintf("statefile: quoting a string: %v", err))
	}
	canonical, err := canonicalTree(raw)
	if err != nil {
		panic(fmt.Sprintf("statefile: quoting a string: %v", err))
	}
	return append(out[:start], canonical[:len(canonical)-1]...)
}

// plainKey reports whether key is non-empty printable ASCII without a quote
// or backslash.
func plainKey(key string) bool {
	for i := 0; i < len(key); i++ {
		if c := key[i]; c == '"' || c == '\\' || c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return key != ""
}

// FormatUUIDv4 renders 16 random bytes as a version-4 UUID in canonical
// lower-case form: the version and variant overwrite 6 of the 128 bits,
// so IsUUIDv4 holds for every input.
func FormatUUIDv4(random [16]byte) string {
	random[6] = random[6]&0x0f | 0x40
	random[8] = random[8]&0x3f | 0x80
	const hex = "0123456789abcdef"
	out := make([]byte, 36)
	j := 0
	for i, c := range random {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out[j] = '-'
			j++
		}
		out[j] = hex[c>>4]
		out[j+1] = hex[c&0xf]
		j += 2
	}
	return string(out)
}
