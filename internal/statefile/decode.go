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
	fields fieldList
	err    error
}

// fieldList holds an object's members in document order: spans into text,
// an immutable copy of the object's bytes (or, for the token loop's members,
// of their unescaped keys and raw values laid end to end). Records have a
// dozen keys, so a linear search beats a map; spans hold no pointers for
// the garbage collector to trace; and a plain string value is a substring
// of text, so reading it allocates nothing.
type fieldList struct {
	text  string
	spans []span
}

// span locates one member: text[keyStart:keyEnd] is its key (unescaped),
// text[valueStart:valueEnd] its value as written, without the whitespace
// around it, as json.RawMessage keeps it. keySig is keySignature of the
// key, so a lookup compares one word per member before any bytes; plain
// says the value is a string of printable ASCII without escapes, which the
// String getter can return as it stands.
type span struct {
	keyStart, keyEnd, valueStart, valueEnd int32
	keySig                                 uint64
	plain                                  bool
}

// newSpan locates a member whose key is key (text[keyStart:keyEnd]).
func newSpan[K string | []byte](key K, keyStart, valueStart, valueEnd int, plain bool) span {
	return span{keyStart: int32(keyStart), keyEnd: int32(keyStart + len(key)), valueStart: int32(valueStart),
		valueEnd: int32(valueEnd), keySig: keySignature(key), plain: plain}
}

func (l fieldList) key(s span) string { return l.text[s.keyStart:s.keyEnd] }

func (l fieldList) value(s span) string { return l.text[s.valueStart:s.valueEnd] }

// find returns the index of key's member, or -1.
func (l fieldList) find(key string) int {
	sig := keySignature(key)
	for i := range l.spans {
		if l.spans[i].keySig == sig && l.key(l.spans[i]) == key {
			return i
		}
	}
	return -1
}

// get returns the value of key.
func (l fieldList) get(key string) (string, bool) {
	if i := l.find(key); i >= 0 {
		return l.value(l.spans[i]), true
	}
	return "", false
}

// keySignature packs a key's length and three of its bytes into a word:
// equal keys have equal signatures, and the keys of one record almost never
// share one. It costs the same for any key length.
func keySignature[K string | []byte](key K) uint64 {
	n := len(key)
	if n == 0 {
		return 0
	}
	return uint64(n) | uint64(key[0])<<32 | uint64(key[n/2])<<40 | uint64(key[n-1])<<48
}

// fieldsMaxBytes bounds what a fieldList can index with int32 spans; the
// engines' reads are bounded far below it.
const fieldsMaxBytes = 1 << 30

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

// DecodeMembers decodes b as exactly one JSON object, as DecodeObject does,
// without checking its key set: for a reader that learns from one field
// which key set applies, and then checks it once with CheckKeys.
func DecodeMembers(b []byte, record string) (*Object, error) {
	fields, err := decodeFields(b)
	if err != nil {
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

// decodeFields splits b into its object's members. Objects the direct scan
// understands take it; everything else goes through encoding/json's token
// loop, which also words the error. Both give the same fields and errors:
// TestDecodeFieldsFastEqualsDecoder and FuzzDecodeFieldsFastEqualsDecoder
// hold them to it.
func decodeFields(b []byte) (fieldList, error) {
	if fields, ok := decodeFieldsFast(b); ok {
		return fields, nil
	}
	return decodeFieldsDecoder(b)
}

// colon marks members: an object has at most as many members as colons.
var colon = []byte{':'}

// fastFieldsMax and fastDepthMax bound what the direct scan takes on: more
// members make its duplicate check quadratic, deeper nesting its recursion
// deep. Records have about a dozen flat members; anything past the bounds is
// hostile or foreign and the token loop handles it.
const (
	fastFieldsMax = 64
	fastDepthMax  = 16
)

// decodeFieldsFast scans and validates, in one pass, a JSON object with
// plain keys (printable ASCII, no escapes), no duplicate key, at most
// fastFieldsMax members and values nested at most fastDepthMax deep. It
// reports false for anything else, valid or not, and decodeFieldsDecoder
// then decides.
func decodeFieldsFast(b []byte) (fieldList, bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return fieldList{}, false
	}
	if len(b) > fieldsMaxBytes {
		return fieldList{}, false
	}
	// text is the members' own copy: they must not change when the caller
	// reuses b. The scan reads b, whose bytes are text's.
	fields := fieldList{text: string(b), spans: make([]span, 0, min(bytes.Count(b, colon), fastFieldsMax))}
	// While keys come in strictly ascending byte order (canonical records),
	// none can repeat an earlier one, and the duplicate search is skipped.
	ascending, previousKey := true, []byte(nil)
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return fields, skipSpace(b, i+1) == len(b)
	}
	for {
		end := plainStringEnd(b[i:])
		if end < 0 || len(fields.spans) == fastFieldsMax {
			return fieldList{}, false
		}
		keyStart, keyEnd := i+1, i+end-1
		if ascending = ascending && bytes.Compare(b[keyStart:keyEnd], previousKey) > 0; !ascending &&
			fields.find(string(b[keyStart:keyEnd])) >= 0 {
			return fieldList{}, false
		}
		previousKey = b[keyStart:keyEnd]
		i = skipSpace(b, i+end)
		if i >= len(b) || b[i] != ':' {
			return fieldList{}, false
		}
		i = skipSpace(b, i+1)
		valueEnd, plain := scanMember(b, i)
		if valueEnd < 0 {
			return fieldList{}, false
		}
		fields.spans = append(fields.spans, newSpan(b[keyStart:keyEnd], keyStart, i, valueEnd, plain))
		i = skipSpace(b, valueEnd)
		if i >= len(b) {
			return fieldList{}, false
		}
		switch b[i] {
		case '}':
			return fields, skipSpace(b, i+1) == len(b)
		case ',':
			i = skipSpace(b, i+1)
		default:
			return fieldList{}, false
		}
	}
}

// scanMember is scanValue for a member's value; it also reports whether
// the value is a plain string (printable ASCII, no escapes).
func scanMember(b []byte, i int) (int, bool) {
	if i < len(b) && b[i] == '"' {
		return scanStringPlain(b, i)
	}
	return scanValue(b, i, 0), false
}

// scanValue validates the JSON value starting at b[i] and returns where it
// ends, or -1 when it is not valid JSON or nests deeper than fastDepthMax.
func scanValue(b []byte, i, depth int) int {
	if i >= len(b) {
		return -1
	}
	switch c := b[i]; {
	case c == '"':
		return scanString(b, i)
	case c == '{' || c == '[':
		if depth == fastDepthMax {
			return -1
		}
		return scanComposite(b, i, depth+1)
	case c == '-' || (c >= '0' && c <= '9'):
		return scanNumber(b, i)
	case c == 't':
		return scanLiteral(b, i, "true")
	case c == 'f':
		return scanLiteral(b, i, "false")
	case c == 'n':
		return scanLiteral(b, i, "null")
	}
	return -1
}

// scanComposite validates the object or array opening at b[i].
func scanComposite(b []byte, i, depth int) int {
	closing, isObject := byte(']'), b[i] == '{'
	if isObject {
		closing = '}'
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == closing {
		return i + 1
	}
	for {
		if isObject {
			if i = scanString(b, i); i < 0 {
				return -1
			}
			if i = skipSpace(b, i); i >= len(b) || b[i] != ':' {
				return -1
			}
			i = skipSpace(b, i+1)
		}
		if i = scanValue(b, i, depth); i < 0 {
			return -1
		}
		if i = skipSpace(b, i); i >= len(b) {
			return -1
		}
		switch b[i] {
		case closing:
			return i + 1
		case ',':
			i = skipSpace(b, i+1)
		default:
			return -1
		}
	}
}

// scanString validates the string opening at b[i]: no control bytes, and
// only JSON's escapes. Other bytes, invalid UTF-8 included, are taken as
// encoding/json takes them.
func scanString(b []byte, i int) int {
	end, _ := scanStringPlain(b, i)
	return end
}

// scanStringPlain is scanString that also reports whether the string is
// plain: printable ASCII without escapes.
func scanStringPlain(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return -1, false
	}
	plain := true
	for i++; i < len(b); i++ {
		if c := b[i]; c >= 0x20 && c < 0x7f && c != '"' && c != '\\' {
			continue // most bytes: printable ASCII that neither ends nor escapes
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, plain
		case c < 0x20:
			return -1, false
		case c >= 0x7f:
			plain = false
		case c == '\\':
			plain = false
			if i++; i >= len(b) {
				return -1, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) || !isHex(b[i+1]) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) {
					return -1, false
				}
				i += 4
			default:
				return -1, false
			}
		}
	}
	return -1, false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// scanNumber validates the number starting at b[i]:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func scanNumber(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = skipDigits(b, i)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		if i++; i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		i = skipDigits(b, i)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		if i++; i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		i = skipDigits(b, i)
	}
	return i
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func skipDigits(b []byte, i int) int {
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	return i
}

// scanLiteral validates that b[i:] starts with word.
func scanLiteral(b []byte, i int, word string) int {
	if !bytes.HasPrefix(b[i:], []byte(word)) {
		return -1
	}
	return i + len(word)
}

// skipSpace returns the index of the first non-space byte at or after i.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// decodeFieldsDecoder is the token loop of encoding/json.
func decodeFieldsDecoder(b []byte) (fieldList, error) {
	if len(b) > fieldsMaxBytes {
		return fieldList{}, errors.New("too large for a record")
	}
	decoder := json.NewDecoder(bytes.NewReader(b))
	token, err := decoder.Token()
	if err != nil {
		return fieldList{}, fmt.Errorf("not valid JSON: %v", err)
	}
	if delim, ok := token.(json.Delim); !ok || delim != '{' {
		return fieldList{}, errors.New("must be a JSON object")
	}
	var fields fieldList
	var text []byte
	seen := make(map[string]bool)
	for decoder.More() {
		keyToken, err := decoder.Token()
		if err != nil {
			return fieldList{}, fmt.Errorf("not valid JSON: %v", err)
		}
		key := keyToken.(string) // the decoder guarantees object keys are strings
		var value json.RawMessage
		if err := decoder.Decode(&value); err != nil {
			return fieldList{}, fmt.Errorf("not valid JSON: %v", err)
		}
		if seen[key] {
			return fieldList{}, fmt.Errorf("duplicate field %q", key)
		}
		seen[key] = true
		keyStart := len(text)
		text = append(append(text, key...), value...)
		fields.spans = append(fields.spans, newSpan(key, keyStart, keyStart+len(key), len(text), plainStringEnd(value) == len(value)))
	}
	if _, err := decoder.Token(); err != nil {
		return fieldList{}, fmt.Errorf("not valid JSON: %v", err)
	}
	if _, err := decoder.Token(); err != io.EOF {
		return fieldList{}, errors.New("trailing data after the JSON object")
	}
	fields.text = string(text)
	return fields, nil
}

// checkKeys checks that fields holds every required key and no key outside
// required and optional. Each listed key is looked up once, by signature,
// and marks its member; a member left unmarked is unknown.
func checkKeys(fields fieldList, required, optional []string) error {
	var marksSmall [64]bool
	marks := marksSmall[:0]
	if len(fields.spans) > len(marksSmall) {
		marks = make([]bool, 0, len(fields.spans))
	}
	marks = marks[:len(fields.spans)]
	for _, key := range required {
		i := fields.find(key)
		if i < 0 {
			return fmt.Errorf("missing field %q", key)
		}
		marks[i] = true
	}
	for _, key := range optional {
		if i := fields.find(key); i >= 0 {
			marks[i] = true
		}
	}
	var unknown []string
	for i, s := range fields.spans {
		if !marks[i] {
			unknown = append(unknown, fields.key(s))
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
	_, ok := o.fields.get(key)
	return ok
}

// IsNull reports whether key holds JSON null.
func (o *Object) IsNull(key string) bool {
	raw, _ := o.fields.get(key)
	return strings.TrimSpace(raw) == "null"
}

// Raw returns the undecoded value of key.
func (o *Object) Raw(key string) json.RawMessage {
	raw, ok := o.fields.get(key)
	if !ok {
		return nil
	}
	return json.RawMessage(raw)
}

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
	raw, plain, ok := o.member(key)
	if !ok {
		return ""
	}
	if plain {
		return raw[1 : len(raw)-1] // the common case: a substring, no copy
	}
	var value string
	if !o.decodeStrict(key, []byte(raw), &value, "a string") {
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
	raw, _, ok := o.member(key)
	if !ok {
		return 0
	}
	value, isInt := smallInteger(raw)
	if !isInt {
		var number json.Number
		if !o.decodeStrict(key, []byte(raw), &number, "a number") {
			return 0
		}
		parsed, err := number.Int64()
		value, isInt = parsed, err == nil
	}
	if !isInt || value < minimum || value > maximum {
		o.Fail("%s must be an integer in [%d, %d]", key, minimum, maximum)
		return 0
	}
	return value
}

// smallInteger parses raw when it is an integer literal of at most 18
// digits, which always fits an int64: the common case, without a decoder
// or an allocation. Anything else reports false.
func smallInteger(raw string) (int64, bool) {
	digits := raw
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 18 || (digits[0] == '0' && len(digits) > 1) {
		return 0, false
	}
	var value int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		value = value*10 + int64(c-'0')
	}
	if len(digits) < len(raw) {
		value = -value
	}
	return value, true
}

// Uint returns key as a non-negative integer up to math.MaxInt64.
func (o *Object) Uint(key string) uint64 {
	return uint64(o.Int(key, 0, math.MaxInt64))
}

// member returns key's raw value and whether it is a plain string, or
// records that it is missing.
func (o *Object) member(key string) (raw string, plain, ok bool) {
	if o.err != nil {
		return "", false, false
	}
	i := o.fields.find(key)
	if i < 0 {
		o.Fail("missing field %q", key)
		return "", false, false
	}
	s := o.fields.spans[i]
	return o.fields.value(s), s.plain, true
}

// decodeStrict decodes raw, the value of key, into target with
// encoding/json: the cases the getters do not take directly.
func (o *Object) decodeStrict(key string, raw json.RawMessage, target any, want string) bool {
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
