package statefile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
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

// ObjectFrom checks an already decoded nested object, as DecodeObject.
func ObjectFrom(raw json.RawMessage, record string, required, optional []string) (*Object, error) {
	return DecodeObject(raw, record, required, optional)
}

func decodeFields(b []byte) (map[string]json.RawMessage, error) {
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
	allowed := make(map[string]bool, len(required)+len(optional))
	for _, key := range required {
		allowed[key] = true
		if _, ok := fields[key]; !ok {
			return fmt.Errorf("missing field %q", key)
		}
	}
	for _, key := range optional {
		allowed[key] = true
	}
	var unknown []string
	for key := range fields {
		if !allowed[key] {
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
