// Package statefile holds the crash-safe state-file primitives every engine
// shares: canonical JSON bytes, bounded reads with strict schema decoding,
// atomic replace, create-only publish and directory fsync. Everything goes
// through the injected lease.FS, so the same code runs on the kernel and in
// simfs, where the simulator crashes it at every step.
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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
)

// Canonical returns the canonical JSON encoding of v followed by one newline:
// object keys sorted in byte order (the seeds' canonicalJson order for the
// ASCII keys every schema uses), no insignificant whitespace, no HTML
// escaping, numbers as written. The same record always
// has the same bytes, so a SHA-256 of them is a compare-and-swap token.
func Canonical(v any) ([]byte, error) {
	raw, err := marshalNoEscape(v)
	if err != nil {
		return nil, fmt.Errorf("canonical JSON: %w", err)
	}
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
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
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
	keys := make([]string, 0, len(object))
	for key := range object {
		keys = append(keys, key)
	}
	sort.Strings(keys)
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
