package lease

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestVersionedKeySetsNest: the premise of decodeVersioned's single check.
func TestVersionedKeySetsNest(t *testing.T) {
	for _, schemas := range [][]schemaKeys{ownerSchemas, guardSchemas} {
		allowed := schemas[len(schemas)-1].keys
		for _, known := range schemas {
			if !slices.Contains(known.keys, "schema") {
				t.Fatalf("%v lacks schema", known.keys)
			}
			for _, key := range known.keys {
				if !slices.Contains(allowed, key) {
					t.Fatalf("%q is outside the newest schema's keys %v", key, allowed)
				}
			}
		}
	}
}

// TestDecodeVersionedEqualsStepByStep: for records of either schema with
// keys dropped, added, duplicated, or a schema of any value, the single
// check returns the step-by-step errors, in their order, and the same
// schema.
func TestDecodeVersionedEqualsStepByStep(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		schemas := ownerSchemas
		if rapid.Bool().Draw(t, "guard") {
			schemas = guardSchemas
		}
		allowed := schemas[len(schemas)-1].keys
		members := map[string]json.RawMessage{}
		for _, key := range allowed {
			if rapid.IntRange(0, 9).Draw(t, "drop-"+key) > 0 {
				members[key] = json.RawMessage(`"x"`)
			}
		}
		if rapid.IntRange(0, 3).Draw(t, "extra") == 0 {
			members[rapid.SampledFrom([]string{"zzz", "epoch", "uid", "Schema"}).Draw(t, "extra-key")] = json.RawMessage(`1`)
		}
		if _, ok := members["schema"]; ok {
			members["schema"] = json.RawMessage(rapid.SampledFrom([]string{"1", "2", "3", "0", `"2"`, "1.5", "null"}).Draw(t, "schema"))
		}
		data, err := json.Marshal(members)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		if rapid.IntRange(0, 5).Draw(t, "duplicate") == 0 {
			data = append(data[:len(data)-1], []byte(`,"schema":2}`)...)
		}
		switch rapid.IntRange(0, 5).Draw(t, "damage") {
		case 0: // torn, as a power loss leaves a record
			data = data[:rapid.IntRange(0, len(data)).Draw(t, "torn-at")]
		case 1: // garbled, as a hostile co-tenant leaves one
			data[rapid.IntRange(0, len(data)-1).Draw(t, "garble-at")] = rapid.Byte().Draw(t, "garble")
		}
		_, schema, err := decodeVersioned(data, "r", schemas)
		_, wantSchema, wantErr := decodeVersionedSlowly(data, "r", schemas)
		if utf8Err := validUTF8(data, "r"); utf8Err != nil {
			wantSchema, wantErr = 0, utf8Err // checked first by both versions
		}
		if fmt.Sprint(err) != fmt.Sprint(wantErr) || schema != wantSchema {
			t.Fatalf("%s: %d, %v; step by step %d, %v", data, schema, err, wantSchema, wantErr)
		}
	})
}
