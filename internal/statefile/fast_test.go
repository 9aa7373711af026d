package statefile

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// The fast ways (appendCanonicalFast, decodeFieldsFast, decodeStrictFast)
// must give exactly what the encoding/json ways give: the canonical bytes
// are CAS tokens and on-disk formats, and the decoder's errors are shown
// to operators.

// jsonValue draws a JSON value shaped like the engines' records (flat
// objects of strings, numbers, null) with, now and then, what the fast ways
// must hand to the slow ones: escapes, non-ASCII, control bytes, nesting,
// keys that differ only in a byte below the quote.
func jsonValue(t *rapid.T, depth int) any {
	kinds := 8
	if depth >= 3 {
		kinds = 6
	}
	switch rapid.IntRange(0, kinds-1).Draw(t, "kind") {
	case 6:
		object := map[string]any{}
		for range rapid.IntRange(0, 8).Draw(t, "members") {
			object[jsonString(t, "key")] = jsonValue(t, depth+1)
		}
		return object
	case 7:
		return rapid.SliceOfN(rapid.Custom(func(t *rapid.T) any { return jsonValue(t, depth+1) }), 0, 4).Draw(t, "array")
	case 4:
		return rapid.SampledFrom([]any{rapid.Int().Draw(t, "int"), rapid.Int64().Draw(t, "int64"),
			int32(rapid.Int32().Draw(t, "int32")), uint32(rapid.Uint32().Draw(t, "uint32"))}).Draw(t, "integer")
	case 5:
		return rapid.SampledFrom([]any{nil, true, false}).Draw(t, "literal")
	case 0:
		return jsonString(t, "string")
	case 1:
		return json.Number(rapid.SampledFrom([]string{"0", "1", "-7", "18446744073709551615", "1.5", "1e400", "-0", "2E-3"}).Draw(t, "number"))
	case 2:
		return rapid.SampledFrom([]any{nil, true, false}).Draw(t, "literal")
	default:
		return rapid.Uint64().Draw(t, "uint")
	}
}

func jsonString(t *rapid.T, label string) string {
	plain := rapid.StringOfN(rapid.RuneFrom([]rune("abcAB01 !#-_/:.")), 0, 6, -1)
	tricky := rapid.StringOfN(rapid.RuneFrom([]rune("a \"\\\n\x01<>&é\u2028\x7f")), 0, 4, -1)
	if rapid.IntRange(0, 4).Draw(t, label+"-tricky") == 0 {
		return tricky.Draw(t, label)
	}
	return plain.Draw(t, label)
}

// recordLike is a flat record with the field types of the engines' records.
type recordLike struct {
	Schema     int     `json:"schema"`
	Generation string  `json:"generation"`
	PID        int     `json:"pid"`
	Boot       *string `json:"bootIdentity"`
	Device     string  `json:"executableDevice"`
	UID        int     `json:"uid"`
	Epoch      uint64  `json:"epoch"`
	CreatedAt  string  `json:"createdAt"`
	Nested     any     `json:"nested,omitempty"`
}

func TestCanonicalFastEqualsTree(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var value any = jsonValue(t, 0)
		if rapid.Bool().Draw(t, "record") {
			boot := jsonString(t, "boot")
			value = recordLike{Schema: 2, Generation: jsonString(t, "generation"), PID: rapid.Int().Draw(t, "pid"),
				Boot: &boot, Device: jsonString(t, "device"), UID: rapid.IntRange(0, 1<<32).Draw(t, "uid"),
				Epoch: rapid.Uint64().Draw(t, "epoch"), CreatedAt: "2026-01-02T03:04:05.678Z", Nested: value}
		}
		assertCanonicalEqualsTree(t, value)
	})
}

func assertCanonicalEqualsTree(t interface{ Fatalf(string, ...any) }, value any) {
	raw, err := marshalNoEscape(value)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	want, err := canonicalTree(raw)
	if err != nil {
		t.Fatalf("canonicalTree: %v", err)
	}
	got, err := Canonical(value)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("Canonical %q (%v), the tree way %q", got, err, want)
	}
}

// FuzzCanonicalFastEqualsTree: for any JSON value, Canonical's bytes are
// the tree way's.
func FuzzCanonicalFastEqualsTree(f *testing.F) {
	f.Add([]byte(`{"b":1,"a":[true,null,"x"],"a ":{"z":"1","y":[]}}`))
	f.Add([]byte(`{"k":"<&>","\u00e9":1.50,"z":{"y":{}},"\u0041":2}`))
	f.Add([]byte(`[1e400,-0,"\ud800","a\u2028"]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var tree any
		decoder := json.NewDecoder(bytes.NewReader(data))
		decoder.UseNumber()
		if decoder.Decode(&tree) != nil {
			return
		}
		assertCanonicalEqualsTree(t, tree)
		if json.Valid(data) {
			assertCanonicalEqualsTree(t, json.RawMessage(bytes.TrimSpace(data)))
		}
	})
}

func TestDecodeFieldsFastEqualsDecoder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		object := map[string]any{}
		for range rapid.IntRange(0, 8).Draw(t, "members") {
			object[jsonString(t, "key")] = jsonValue(t, 1)
		}
		raw, err := json.Marshal(object)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		variants := [][]byte{raw, append([]byte(" \n"), append(raw, '\n')...)}
		if indented, err := json.MarshalIndent(object, "", "  "); err == nil {
			variants = append(variants, indented)
		}
		if len(raw) > 2 {
			variants = append(variants, raw[:len(raw)-1], append(append([]byte(nil), raw...), raw...),
				append(append([]byte(nil), raw[:len(raw)-1]...), []byte(`,"dup":1,"dup":2}`)...))
		}
		for _, data := range variants {
			assertDecodeFieldsEqual(t, data)
		}
	})
}

// decodeEdgeCases are inputs at every edge of the direct scan's grammar,
// valid and not: each must give the token loop's fields or error. The
// fuzzer starts from them too.
var decodeEdgeCases = []string{
	`{}`, ` {} `, `{} {}`, `{}x`, `{`, `}`, `{,}`, `{"a"}`, `{"a" 1}`, `{"a":}`, `{"a":1,}`, `{"a":1 "b":2}`,
	`{"a":0}`, `{"a":01}`, `{"a":-}`, `{"a":-0}`, `{"a":-01}`, `{"a":1.}`, `{"a":1.5}`, `{"a":.5}`, `{"a":1e}`,
	`{"a":1e+}`, `{"a":1E+5}`, `{"a":1e-05}`, `{"a":-0.0E-0}`, `{"a":+1}`, `{"a":1x}`, `{"a":12 34}`,
	`{"a":true}`, `{"a":tru}`, `{"a":trxe}`, `{"a":faxse}`, `{"a":nuxl}`, `{"a":truex}`, `{"a":false}`, `{"a":fals}`, `{"a":null}`, `{"a":nul}`, `{"a":NaN}`,
	`{"a":"x"}`, `{"a":"\/"}`, `{"a":"\q"}`, `{"a":"\u00e9"}`, `{"a":"\u12"}`, `{"a":"\u12g4"}`, `{"a":"\ug123"}`, `{"a":"\u1g23"}`, `{"a":"\`,
	"{\"a\":\"\x01\"}", "{\"a\":\"\x7f\xff\xfe\"}", "{\"a\":\"tab\there\"}", `{"a":"unterminated}`,
	`{"a":[]}`, `{"a":[1,]}`, `{"a":[,1]}`, `{"a":[1 2]}`, `{"a":[1,[2,{"b":[]}]]}`, `{"a":[}`, `{"a":]}`,
	`{"a":{}}`, `{"a":{"b":1,}}`, `{"a":{"b"}}`, `{"a":{1:2}}`, `{"a":{"b":1}}}`, `{"a":{"b":1,"b":2}}`,
	`{"a":1,"a":2}`, `{"a\u0062":1,"ab":2}`, `{"\"":1}`, "{\"\xc3\xa9\":1}", `{"a":1}` + "\n\t\r ",
	strings.Repeat(`{"a":`, 20) + `1` + strings.Repeat(`}`, 20),
	`{"a":` + strings.Repeat(`[`, 17) + strings.Repeat(`]`, 17) + `}`,
	`{"a":` + strings.Repeat(`[`, 16) + strings.Repeat(`]`, 16) + `}`,
	`{"a":` + strings.Repeat(`[`, 15) + strings.Repeat(`]`, 15) + `}`,
	`{` + strings.Repeat(`"k":1,`, 70) + `"z":1}`,
	`[]`, `"x"`, `1`, `null`, ``, ` `,
}

func TestDecodeFieldsFastEdgeCases(t *testing.T) {
	for _, data := range decodeEdgeCases {
		assertDecodeFieldsEqual(t, []byte(data))
	}
	var members []string
	for i := range 70 {
		members = append(members, fmt.Sprintf(`"k%d":%d`, i, i))
	}
	assertDecodeFieldsEqual(t, []byte("{"+strings.Join(members, ",")+"}"))
}

// FuzzDecodeFieldsFastEqualsDecoder: for any bytes, the fields (or the
// error) of DecodeObject are the token loop's, and so are the getters'.
func FuzzDecodeFieldsFastEqualsDecoder(f *testing.F) {
	f.Add([]byte(`{"schema":1}`))
	f.Add([]byte(` { "schema" : 2 , "epoch":3,"generation":"g","owner":{"pid":1},"pid":-4 }` + "\n"))
	f.Add([]byte(`{"schema":1,"schema":1}`))
	f.Add([]byte(`{"schema":"1","pid":"\u0041","epoch":1.5e3}`))
	f.Add([]byte("{\"schema\":1}\x00"))
	f.Add([]byte(`[]`))
	for _, data := range decodeEdgeCases {
		f.Add([]byte(data))
	}
	f.Fuzz(func(t *testing.T, data []byte) { assertDecodeFieldsEqual(t, data) })
}

func assertDecodeFieldsEqual(t interface{ Fatalf(string, ...any) }, data []byte) {
	want, wantErr := decodeFieldsDecoder(data)
	got, gotErr := decodeFields(data)
	if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got.members(), want.members()) {
		t.Fatalf("decodeFields(%q) = %q, %v; the token loop: %q, %v", data, got.members(), gotErr, want.members(), wantErr)
	}
	for _, member := range want.members() {
		key, raw := member[0], json.RawMessage(member[1])
		assertGettersEqualDecoder(t, want, key, raw)
		if gotErr == nil {
			assertGettersEqualDecoder(t, got, key, raw) // the direct scan's plain flags
		}
		for _, target := range []func() any{func() any { return new(string) }, func() any { return new(json.Number) }} {
			fast, slow := target(), target()
			if !decodeStrictFast(raw, fast) {
				continue
			}
			decoder := json.NewDecoder(bytes.NewReader(raw))
			decoder.UseNumber()
			if err := decoder.Decode(slow); err != nil || !reflect.DeepEqual(fast, slow) {
				t.Fatalf("%s=%s: fast decode %v, the decoder %v (%v)", key, raw, fast, slow, err)
			}
		}
	}
}

// TestCanonicalObjectEqualsCanonical: the field-by-field writer gives
// Canonical's bytes for a struct of the same fields, whatever the strings.
func TestCanonicalObjectEqualsCanonical(t *testing.T) {
	type flat struct {
		Boot  *string `json:"bootIdentity"`
		Epoch uint64  `json:"epoch"`
		Name  string  `json:"name"`
		PID   int64   `json:"pid"`
		Zone  string  `json:"zone"`
	}
	rapid.Check(t, func(t *rapid.T) {
		boot := jsonString(t, "boot")
		if rapid.IntRange(0, 3).Draw(t, "invalid-utf8") == 0 {
			boot += "\xff\xfe"
		}
		value := flat{Epoch: rapid.Uint64().Draw(t, "epoch"), Name: jsonString(t, "name"),
			PID: rapid.Int64().Draw(t, "pid"), Zone: jsonString(t, "zone")}
		if boot != "" {
			value.Boot = &boot
		}
		object := NewCanonicalObject(64)
		object.NullableString("bootIdentity", boot)
		object.Uint("epoch", value.Epoch)
		object.String("name", value.Name)
		object.Int("pid", value.PID)
		object.String("zone", value.Zone)
		want, err := Canonical(value)
		if err != nil {
			t.Fatalf("Canonical: %v", err)
		}
		if got := object.Bytes(); !bytes.Equal(got, want) {
			t.Fatalf("CanonicalObject %q, Canonical %q", got, want)
		}
	})
}

func TestCanonicalObjectRefusesKeysOutOfOrder(t *testing.T) {
	for _, keys := range [][]string{{"b", "a"}, {"a", "a"}, {"a\"b"}, {"é"}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("keys %q: no panic", keys)
				}
			}()
			object := NewCanonicalObject(16)
			for _, key := range keys {
				object.Int(key, 1)
			}
		}()
	}
}

// TestCanonicalObjectNests: a nested object's keys are ordered among
// themselves, the key after its Close among the outer ones, and a Close
// without an Open or Bytes inside an open object panics.
func TestCanonicalObjectNests(t *testing.T) {
	object := NewCanonicalObject(16)
	object.Int("b", 1)
	object.Open("c")
	object.Int("a", 2)
	object.Null("z")
	object.Close()
	object.Open("d")
	object.Close()
	object.String("e", "x")
	want := MustCanonical(map[string]any{"b": 1, "c": map[string]any{"a": 2, "z": nil}, "d": map[string]any{}, "e": "x"})
	if got := object.Bytes(); !bytes.Equal(got, want) {
		t.Fatalf("nested CanonicalObject %q, Canonical %q", got, want)
	}
	for name, misuse := range map[string]func(*CanonicalObject){
		"outer key not after the opened one": func(o *CanonicalObject) { o.Open("m"); o.Close(); o.Int("a", 1) },
		"Close without Open":                 func(o *CanonicalObject) { o.Close() },
		"Bytes inside an open object":        func(o *CanonicalObject) { o.Open("m"); o.Bytes() },
		"inner keys out of order":            func(o *CanonicalObject) { o.Open("m"); o.Int("b", 1); o.Int("a", 1) },
		"nested past the bound": func(o *CanonicalObject) {
			for _, key := range []string{"a", "b", "c", "d", "e"} {
				o.Open(key)
			}
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			misuse(NewCanonicalObject(16))
		}()
	}
}

// assertGettersEqualDecoder: String and Int, which read common values
// directly, return what encoding/json makes of raw, and refuse what it
// refuses.
func assertGettersEqualDecoder(t interface{ Fatalf(string, ...any) }, fields fieldList, key string, raw json.RawMessage) {
	object := &Object{record: "r", fields: fields}
	got := object.String(key)
	var want string
	wantErr := json.Unmarshal(raw, &want)
	if (object.Err() == nil) != (wantErr == nil) || got != want {
		t.Fatalf("String(%s) = %q, %v; encoding/json: %q, %v", raw, got, object.Err(), want, wantErr)
	}
	for _, bounds := range [][2]int64{{math.MinInt64, math.MaxInt64}, {0, 1 << 32}, {1, math.MaxInt32}} {
		object = &Object{record: "r", fields: object.fields}
		gotInt := object.Int(key, bounds[0], bounds[1])
		var number json.Number
		decoder := json.NewDecoder(bytes.NewReader(raw))
		decoder.UseNumber()
		wantInt, wantOK := int64(0), decoder.Decode(&number) == nil && looksNumeric(raw)
		if wantOK {
			parsed, err := strconv.ParseInt(string(number), 10, 64)
			wantOK = err == nil && parsed >= bounds[0] && parsed <= bounds[1]
			if wantOK {
				wantInt = parsed
			}
		}
		if (object.Err() == nil) != wantOK || gotInt != wantInt {
			t.Fatalf("Int(%s, %v) = %d, %v; encoding/json: %d, ok %v", raw, bounds, gotInt, object.Err(), wantInt, wantOK)
		}
	}
}

func TestGettersEqualDecoder(t *testing.T) {
	for _, raw := range []string{`0`, `-0`, `7`, `-7`, `1.5`, `1e3`, `-1E+2`, `999999999999999999`,
		`9223372036854775807`, `9223372036854775808`, `-9223372036854775808`, `-9223372036854775809`,
		`4294967296`, `4294967297`, `2147483648`, `"12"`, `"x"`, `"\u0041"`, `"a\"b"`, `""`, `null`, `true`,
		`[]`, `{}`, `"\ud800"`, "\"\xff\""} {
		fields := fieldList{text: "k" + raw}
		fields.spans = append(fields.spans, newSpan("k", 0, 1, len(fields.text), plainStringEnd([]byte(raw)) == len(raw)))
		assertGettersEqualDecoder(t, fields, "k", json.RawMessage(raw))
		if decoded, ok := decodeFieldsFast([]byte(`{"k":` + raw + `}`)); ok {
			assertGettersEqualDecoder(t, decoded, "k", json.RawMessage(raw))
		}
	}
}

// members lists the key and value of each member, in order.
func (l fieldList) members() [][2]string {
	var out [][2]string
	for _, s := range l.spans {
		out = append(out, [2]string{l.key(s), l.value(s)})
	}
	return out
}

// TestCanonicalDirectEqualsTree: the reflection-free way (appendDirect)
// gives the tree way's bytes for each kind of value it takes, and hands
// every string it must not write as it is (a quote, a backslash, a control
// byte, DEL, non-ASCII) to encoding/json, as a key or as a value.
func TestCanonicalDirectEqualsTree(t *testing.T) {
	tricky := []string{"a\"b", "a\\b", "a\x1fb", "a\x7fb", "é", "a\u2028b", "<&>", "", " !#", "\xff"}
	values := []any{nil, true, false, 0, -1, int64(-1 << 63), int32(-5), uint32(1 << 31), uint64(1<<64 - 1),
		[]any{}, []any{1, "x", nil}, map[string]any{}, map[string]any{"b": 1, "a": map[string]any{"z": []any{true}}}}
	for _, s := range tricky {
		values = append(values, s, []any{s}, map[string]any{s: 1}, map[string]any{"k": s, "j": 2})
	}
	for _, v := range values {
		assertCanonicalEqualsTree(t, v)
	}
	for _, v := range []any{map[string]any{"a": 1}, []any{"x"}, "plain", 7} {
		if _, ok := appendDirect(nil, v, 0); !ok {
			t.Errorf("appendDirect(%#v) went the long way; the engines' records must not", v)
		}
	}
	if _, ok := appendDirect(nil, map[string]any{"n": json.Number("1")}, 0); ok {
		t.Error("appendDirect took a json.Number, which it cannot know is canonical")
	}
}

// claimLike is a record shaped like dirlease's claim as its Bytes builds
// it: a map with nested identity and owner maps.
func claimLike() map[string]any {
	identity := map[string]any{"device": "2049", "inode": "1234567", "birthtimeNs": "1764633600000000000"}
	owner := map[string]any{"pid": 4242, "bootId": "0e3c6b0a-7d2f-4f4e-9c1a-3b5d7e9f1a2c",
		"processStartId": "sha256:0123456789abcdef0123456789abcdef", "hostname": "build-7", "pidNamespace": "4026531836"}
	return map[string]any{"schemaVersion": 4, "kind": "leasekit.dirlease.claim", "id": "7f9c2b1e-4d3a-4b6c-8e1f-2a3b4c5d6e7f",
		"role": "raw-working", "path": "/state/work/w17", "parentPath": "/state/work", "parentIdentity": identity,
		"directoryIdentity": identity, "outputRoot": nil, "owner": owner, "childOwner": nil, "phase": "running",
		"createdAtMs": int64(1764633600123), "recoverAfterMs": int64(1764633660123), "revision": "c0ffee00-1234-4abc-8def-0123456789ab",
		"createdAtBootMs": int64(5123)}
}

// BenchmarkCanonical: the reflection-free way against encoding/json's
// (marshal, then reorder), on the same claim-shaped record, in one run:
// `go test ./internal/statefile -bench Canonical -benchmem`.
func BenchmarkCanonical(b *testing.B) {
	record := claimLike()
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			if _, err := Canonical(record); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			raw, err := marshalNoEscape(record)
			if err != nil {
				b.Fatal(err)
			}
			if _, ok := appendCanonicalFast(make([]byte, 0, len(raw)+1), raw); !ok {
				b.Fatal("not plain")
			}
		}
	})
}

// TestIsUUIDv4AndIsSHA256HexMatchThePatterns: IsUUIDv4 and IsSHA256Hex accept exactly
// what the regular expressions they replace accept, on UUIDs and digests
// with one byte changed, cut or added, and on any string.
func TestIsUUIDv4AndIsSHA256HexMatchThePatterns(t *testing.T) {
	uuidPattern := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	digestPattern := regexp.MustCompile(`^[a-f0-9]{64}$`)
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.OneOf(
			rapid.StringMatching(`[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}`),
			rapid.StringMatching(`[0-9a-f]{64}`),
			rapid.String(),
		).Draw(t, "s")
		if len(s) > 0 && rapid.Bool().Draw(t, "mutate") {
			at := rapid.IntRange(0, len(s)-1).Draw(t, "at")
			b := []byte(s)
			switch rapid.IntRange(0, 2).Draw(t, "how") {
			case 0:
				b[at] = rapid.SampledFrom([]byte("0459abfgA-\n\x00\xff")).Draw(t, "byte")
			case 1:
				b = append(b[:at], b[at+1:]...)
			default:
				b = append(b, rapid.SampledFrom([]byte("0a-\n")).Draw(t, "extra"))
			}
			s = string(b)
		}
		if got, want := IsUUIDv4(s), uuidPattern.MatchString(s); got != want {
			t.Fatalf("IsUUIDv4(%q) = %v, the pattern says %v", s, got, want)
		}
		if got, want := IsSHA256Hex(s), digestPattern.MatchString(s); got != want {
			t.Fatalf("IsSHA256Hex(%q) = %v, the pattern says %v", s, got, want)
		}
	})
}

func TestSHA256HexGolden(t *testing.T) {
	for input, want := range map[string]string{
		"":    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"abc": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
	} {
		if got := SHA256Hex([]byte(input)); got != want {
			t.Errorf("SHA256Hex(%q) = %s, want %s", input, got, want)
		}
		if !HasSHA256Hex([]byte(input), want) || HasSHA256Hex([]byte(input+"x"), want) || HasSHA256Hex([]byte(input), want[1:]) {
			t.Errorf("HasSHA256Hex(%q) does not answer SHA256Hex == %s", input, want)
		}
	}
}

// TestFormatUUIDv4: golden renderings (the version and variant bits
// overwrite the input's, every other bit is kept), and any 16 bytes render
// to what IsUUIDv4 accepts and decode back to the same bytes but those six.
func TestFormatUUIDv4(t *testing.T) {
	for _, tc := range []struct {
		random [16]byte
		want   string
	}{
		{[16]byte{}, "00000000-0000-4000-8000-000000000000"},
		{[16]byte{0: 0xff, 1: 0xff, 2: 0xff, 3: 0xff, 4: 0xff, 5: 0xff, 6: 0xff, 7: 0xff, 8: 0xff, 9: 0xff, 10: 0xff,
			11: 0xff, 12: 0xff, 13: 0xff, 14: 0xff, 15: 0xff}, "ffffffff-ffff-4fff-bfff-ffffffffffff"},
		{[16]byte{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef},
			"01234567-89ab-4def-8123-456789abcdef"},
	} {
		if got := FormatUUIDv4(tc.random); got != tc.want {
			t.Errorf("FormatUUIDv4(%x) = %s, want %s", tc.random, got, tc.want)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		var random [16]byte
		copy(random[:], rapid.SliceOfN(rapid.Byte(), 16, 16).Draw(t, "random"))
		id := FormatUUIDv4(random)
		if !IsUUIDv4(id) {
			t.Fatalf("FormatUUIDv4(%x) = %q, not a version-4 UUID", random, id)
		}
		decoded, err := hex.DecodeString(strings.ReplaceAll(id, "-", ""))
		if err != nil {
			t.Fatal(err)
		}
		random[6] = random[6]&0x0f | 0x40
		random[8] = random[8]&0x3f | 0x80
		if !bytes.Equal(decoded, random[:]) {
			t.Fatalf("FormatUUIDv4 rendered %q, which decodes to %x, not %x", id, decoded, random)
		}
	})
}
