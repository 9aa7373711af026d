package statefile

import (
	"bytes"
	"encoding/json"
	"testing"
)

// fuzzKeys is a key set shaped like the engines' records.
var (
	fuzzRequired = []string{"schema"}
	fuzzOptional = []string{"epoch", "generation", "owner", "pid"}
)

// FuzzDecodeObject: DecodeObject never panics; every getter on an accepted
// object never panics; and an accepted object is accepted again, with the
// same values, from its canonical bytes (parse(canonical(parse(b))) ==
// parse(b)), so a record the engines accept can always be rewritten.
func FuzzDecodeObject(f *testing.F) {
	f.Add([]byte(`{"schema":1}`))
	f.Add([]byte(`{"schema":2,"epoch":3,"generation":"g","owner":{"pid":1},"pid":-4}` + "\n"))
	f.Add([]byte(`{"schema":1,"schema":1}`))
	f.Add([]byte(`{"schema":"1"}`))
	f.Add([]byte("{\"schema\":1}\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		object, err := DecodeObject(data, "fuzz record", fuzzRequired, fuzzOptional)
		if err != nil {
			if _, ok := err.(*SchemaError); !ok {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		values := readAll(object)
		var tree any
		decoder := json.NewDecoder(bytes.NewReader(data))
		decoder.UseNumber()
		if err := decoder.Decode(&tree); err != nil {
			t.Fatalf("DecodeObject accepted what encoding/json rejects: %v", err)
		}
		canonical, err := Canonical(tree)
		if err != nil {
			t.Fatalf("accepted record has no canonical form: %v", err)
		}
		again, err := DecodeObject(canonical, "fuzz record", fuzzRequired, fuzzOptional)
		if err != nil {
			t.Fatalf("canonical bytes %q of an accepted record are refused: %v", canonical, err)
		}
		if valuesAgain := readAll(again); valuesAgain != values {
			t.Fatalf("values changed through canonical bytes: %q != %q", valuesAgain, values)
		}
	})
}

// readAll runs every getter over every key and renders what they saw.
func readAll(object *Object) string {
	var out bytes.Buffer
	for _, key := range append(append([]string(nil), fuzzRequired...), fuzzOptional...) {
		probe := &Object{record: object.record, fields: object.fields}
		_, _ = probe.NullableString(key)
		out.WriteString(probe.String(key))
		probe = &Object{record: object.record, fields: object.fields}
		out.WriteString(string(rune('0' + probe.Int(key, -1<<62, 1<<62)%10)))
		probe = &Object{record: object.record, fields: object.fields}
		probe.Uint(key)
		probe.NonEmptyString(key)
		out.WriteString(string(rune('0' + boolDigit(object.Has(key), object.IsNull(key)))))
	}
	return out.String()
}

func boolDigit(a, b bool) int {
	digit := 0
	if a {
		digit++
	}
	if b {
		digit += 2
	}
	return digit
}

// FuzzCanonical: for any JSON value, Canonical succeeds, is idempotent
// (canonical(decode(canonical(v))) == canonical(v)) and ends in exactly one
// newline: the CAS tokens of the engines depend on it.
func FuzzCanonical(f *testing.F) {
	f.Add([]byte(`{"b":1,"a":[true,null,"x"]}`))
	f.Add([]byte(`{"k":"<&>","\u00e9":1.50,"z":{"y":{}}}`))
	f.Add([]byte(`[1e400,-0,"\ud800"]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var tree any
		decoder := json.NewDecoder(bytes.NewReader(data))
		decoder.UseNumber()
		if decoder.Decode(&tree) != nil {
			return
		}
		first, err := Canonical(tree)
		if err != nil {
			t.Fatalf("Canonical of decoded JSON failed: %v", err)
		}
		if !bytes.HasSuffix(first, []byte("\n")) || bytes.HasSuffix(first, []byte("\n\n")) {
			t.Fatalf("canonical bytes %q do not end in exactly one newline", first)
		}
		var again any
		decoder = json.NewDecoder(bytes.NewReader(first))
		decoder.UseNumber()
		if err := decoder.Decode(&again); err != nil {
			t.Fatalf("canonical bytes %q do not decode: %v", first, err)
		}
		second, err := Canonical(again)
		if err != nil || !bytes.Equal(first, second) {
			t.Fatalf("Canonical is not idempotent: %q then %q (%v)", first, second, err)
		}
	})
}
