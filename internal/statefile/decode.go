package statefile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
)

// SchemaError says why bytes are not a valid record of a schema. Engines wrap
// it into their own typed refusals, naming the file.
type SchemaError struct {
	// Record names the schema ("receiver owner", "export admission", ...).
	Record string
	// Problem says what is wrong, e.g. `unknown field "x"`.
	Problem string
}

func (e *SchemaError) Error() string { return e.Record + ": " + e.Problem }

// Object is a decoded JSON object whose key set has been checked exactly.
// Its getters record the first problem and return zero values after it, so a
// parser reads straight through and asks Err once at the end.
type Object struct {
	record string
	fields map[string]json.RawMessage
	err    error
}

// DecodeObject decodes b as exactly one JSON object whose keys are all in
// required or optional and include every required one. Duplicate keys,
// trailing data and non-objects are rejected.
func DecodeObject(b []byte, record string, required, optional []string) (*Object, error) {
	fields, err := decodeFields(b)
	if err != nil {
		return nil, &SchemaError{Record: record, Problem: err.Error()}
	}
	if err := checkKeys(fields, required, optional); err != nil {
		return nil, &SchemaError{Record: record, Problem: err.Error()}
	}
	return &Object{record: record, fields: fields}, nil
}

// CheckKeys checks the key set of an already decoded object again, against
// other key lists: the same check, and the same error, as DecodeObject of
// the same bytes with these lists, without decoding them twice (a reader
// that learns the schema from one field before it knows the key set).
func (o *Object) CheckKeys(required, optional []string) error {
	if err := checkKeys(o.fields, required, optional); err != nil {
		return &SchemaError{Record: o.record, Problem: err.Error()}
	}
	return nil
}

// ObjectFrom checks an already decoded nested object, as DecodeObject.
func ObjectFrom(raw json.RawMessage, record string, required, optional []string) (*Object, error) {
	return DecodeObject(raw, record, required, optional)
}

// decodeFields splits b into its object's members. Valid JSON objects take
// a direct scan; everything else goes through encoding/json's token loop,
// which also words the error. Both give the same fields and errors:
// TestDecodeFieldsFastEqualsDecoder and FuzzDecodeFieldsFastEqualsDecoder
// hold them to it.
func decodeFields(b []byte) (map[string]json.RawMessage, error) {
	if fields, ok := decodeFieldsFast(b); ok {
		return fields, nil
	}
	return decodeFieldsDecoder(b)
}

// decodeFieldsFast scans a valid JSON object with plain keys (printable
// ASCII, no escapes) and no duplicate key; it reports false for anything
// else, and decodeFieldsDecoder then decides. Values are kept as written,
// without the whitespace around them, as json.RawMessage keeps them.
func decodeFieldsFast(b []byte) (map[string]json.RawMessage, bool) {
	if !json.Valid(b) {
		return nil, false
	}
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	b = bytes.Clone(b) // the fields must not change when the caller reuses b
	fields := make(map[string]json.RawMessage, 20)
	i = skipSpace(b, i+1)
	for b[i] != '}' {
		if len(fields) > 0 {
			i = skipSpace(b, i+1) // the comma; valid JSON has one here
		}
		end := plainStringEnd(b[i:])
		if end < 0 {
			return nil, false
		}
		key := string(b[i+1 : i+end-1])
		i = skipSpace(b, i+end)
		i = skipSpace(b, i+1) // the colon
		valueEnd := validValueEnd(b, i)
		if _, dup := fields[key]; dup {
			return nil, false
		}
		fields[key] = b[i:valueEnd:valueEnd]
		i = skipSpace(b, valueEnd)
	}
	return fields, true
}

// validValueEnd returns where the value starting at b[i] ends; b is valid
// JSON, so strings are the only thing to step over with care.
func validValueEnd(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			i++
			for b[i] != '"' {
				if b[i] == '\\' {
					i++
				}
				i++
			}
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i
			}
			depth--
			if depth == 0 {
				return i + 1
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i
			}
		}
	}
	return i
}

// skipSpace returns the index of the first non-space byte at or after i.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// decodeFieldsDecoder is the token loop of encoding/json.
func decodeFieldsDecoder(b []byte) (map[string]json.RawMessage, error) {
	decoder := json.NewDecoder(bytes.NewReader(b))
	token, err := decoder.Token()
	if err != nil {
		return nil, fmt.Errorf("not valid JSON: %v", err)
	}
	if delim, ok := token.(json.Delim); !ok || delim != '{' {
		return nil, errors.New("must be a JSON object")
	}
	fields := make(map[string]json.RawMessage)
	for decoder.More() {
		keyToken, err := decoder.Token()
		if err != nil {
			return nil, fmt.Errorf("not valid JSON: %v", err)
		}
		key := keyToken.(string) // the decoder guarantees object keys are strings
		var value json.RawMessage
		if err := decoder.Decode(&value); err != nil {
			return nil, fmt.Errorf("not valid JSON: %v", err)
		}
		if _, dup := fields[key]; dup {
			return nil, fmt.Errorf("duplicate field %q", key)
		}
		fields[key] = value
	}
	if _, err := decoder.Token(); err != nil {
		return nil, fmt.Errorf("not valid JSON: %v", err)
	}
	if _, err := decoder.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON object")
	}
	return fields, nil
}

func checkKeys(fields map[string]json.RawMessage, required, optional []string) error {
	for _, key := range required {
		if _, ok := fields[key]; !ok {
			return fmt.Errorf("missing field %q", key)
		}
	}
	var unknown []string
	for key := range fields {
		if !slices.Contains(required, key) && !slices.Contains(optional, key) {
			unknown = append(unknown, key)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Errorf("unknown fields: %s", strings.Join(unknown, ", "))
	}
	return nil
}

// Has reports whether the object holds key.
func (o *Object) Has(key string) bool {
	_, ok := o.fields[key]
	return ok
}

// IsNull reports whether key holds JSON null.
func (o *Object) IsNull(key string) bool {
	return string(bytes.TrimSpace(o.fields[key])) == "null"
}

// Raw returns the undecoded value of key.
func (o *Object) Raw(key string) json.RawMessage { return o.fields[key] }

// Err returns the first problem any getter met.
func (o *Object) Err() error { return o.err }

// Fail records a problem found by the caller's own validation.
func (o *Object) Fail(format string, args ...any) {
	if o.err == nil {
		o.err = &SchemaError{Record: o.record, Problem: fmt.Sprintf(format, args...)}
	}
}

// String returns key as a string; wrong types are a problem.
func (o *Object) String(key string) string {
	var value string
	if !o.decodeStrict(key, &value, "a string") {
		return ""
	}
	return value
}

// NonEmptyString returns key as a non-empty string.
func (o *Object) NonEmptyString(key string) string {
	value := o.String(key)
	if o.err == nil && value == "" {
		o.Fail("%s must be a non-empty string", key)
	}
	return value
}

// NullableString returns key as a string, or "" and false for null. An empty
// string is a problem: null is the only way to say "none".
func (o *Object) NullableString(key string) (string, bool) {
	if o.IsNull(key) {
		return "", false
	}
	value := o.String(key)
	if o.err == nil && value == "" {
		o.Fail("%s must be null or a non-empty string", key)
	}
	return value, true
}

// Int returns key as an integer in [minimum, maximum]. Fractions, exponents
// beyond the range and non-numbers are problems.
func (o *Object) Int(key string, minimum, maximum int64) int64 {
	var number json.Number
	if !o.decodeStrict(key, &number, "a number") {
		return 0
	}
	value, err := number.Int64()
	if err != nil || value < minimum || value > maximum {
		o.Fail("%s must be an integer in [%d, %d]", key, minimum, maximum)
		return 0
	}
	return value
}

// Uint returns key as a non-negative integer up to math.MaxInt64.
func (o *Object) Uint(key string) uint64 {
	return uint64(o.Int(key, 0, math.MaxInt64))
}

func (o *Object) decodeStrict(key string, target any, want string) bool {
	if o.err != nil {
		return false
	}
	raw, ok := o.fields[key]
	if !ok {
		o.Fail("missing field %q", key)
		return false
	}
	if decodeStrictFast(raw, target) {
		return true
	}
	decoder := json.NewDecoder(bytes.NewReader(raw))
	decoder.UseNumber()
	if err := decoder.Decode(target); err != nil {
		o.Fail("%s must be %s", key, want)
		return false
	}
	if _, isNumber := target.(*json.Number); isNumber && !looksNumeric(raw) {
		o.Fail("%s must be %s", key, want)
		return false
	}
	return true
}

// looksNumeric rejects a JSON string that json.Number would accept ("\"12\"").
func looksNumeric(raw json.RawMessage) bool {
	trimmed := bytes.TrimSpace(raw)
	return len(trimmed) > 0 && (trimmed[0] == '-' || (trimmed[0] >= '0' && trimmed[0] <= '9'))
}

// decodeStrictFast decodes the common cases without a json.Decoder: a plain
// string (printable ASCII, no escapes) into a string, a number into a
// json.Number. raw is a value DecodeObject took from valid JSON, so a
// leading '-' or digit is a whole number literal, as written. It reports
// false when the case is not one of these, and the decoder decides.
func decodeStrictFast(raw json.RawMessage, target any) bool {
	switch target := target.(type) {
	case *string:
		if end := plainStringEnd(raw); end == len(raw) {
			*target = string(raw[1 : end-1])
			return true
		}
	case *json.Number:
		if len(raw) > 0 && (raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9')) {
			*target = json.Number(raw)
			return true
		}
	}
	return false
}
