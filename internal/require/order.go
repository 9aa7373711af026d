package require

import (
	"fmt"
	"reflect"
	"time"
)

// Greater asserts e1 > e2: two numbers, strings or times of one kind.
func Greater(t TestingT, e1, e2 any, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	assertOrder(t, e1, e2, func(c int) bool { return c > 0 }, "greater than", msgAndArgs)
}

// GreaterOrEqual asserts e1 >= e2.
func GreaterOrEqual(t TestingT, e1, e2 any, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	assertOrder(t, e1, e2, func(c int) bool { return c >= 0 }, "greater than or equal to", msgAndArgs)
}

// Less asserts e1 < e2.
func Less(t TestingT, e1, e2 any, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	assertOrder(t, e1, e2, func(c int) bool { return c < 0 }, "less than", msgAndArgs)
}

// LessOrEqual asserts e1 <= e2.
func LessOrEqual(t TestingT, e1, e2 any, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	assertOrder(t, e1, e2, func(c int) bool { return c <= 0 }, "less than or equal to", msgAndArgs)
}

// Positive asserts e > 0 for a number e.
func Positive(t TestingT, e any, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if e == nil {
		fail(t, "\"<nil>\" is not positive", msgAndArgs)
	}
	zero := reflect.Zero(reflect.TypeOf(e)).Interface()
	c, ok := compare(e, zero)
	if !ok || c <= 0 {
		fail(t, fmt.Sprintf("\"%v\" is not positive", e), msgAndArgs)
	}
}

func assertOrder(t TestingT, e1, e2 any, holds func(int) bool, relation string, msgAndArgs []any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if reflect.TypeOf(e1) != reflect.TypeOf(e2) {
		fail(t, fmt.Sprintf("Elements should be the same type: %T and %T", e1, e2), msgAndArgs)
	}
	c, ok := compare(e1, e2)
	if !ok {
		fail(t, fmt.Sprintf("Can not compare type %T", e1), msgAndArgs)
	}
	if !holds(c) {
		fail(t, fmt.Sprintf("\"%v\" is not %s \"%v\"", e1, relation, e2), msgAndArgs)
	}
}

// compare orders two values of one type: -1, 0 or 1, and whether the type
// has an order (integers, floats, strings, time.Time).
func compare(e1, e2 any) (int, bool) {
	if t1, ok := e1.(time.Time); ok {
		return t1.Compare(e2.(time.Time)), true
	}
	v1, v2 := reflect.ValueOf(e1), reflect.ValueOf(e2)
	switch v1.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return sign(v1.Int() > v2.Int(), v1.Int() < v2.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return sign(v1.Uint() > v2.Uint(), v1.Uint() < v2.Uint()), true
	case reflect.Float32, reflect.Float64:
		return sign(v1.Float() > v2.Float(), v1.Float() < v2.Float()), true
	case reflect.String:
		return sign(v1.String() > v2.String(), v1.String() < v2.String()), true
	default:
		return 0, false
	}
}

func sign(greater, less bool) int {
	switch {
	case greater:
		return 1
	case less:
		return -1
	default:
		return 0
	}
}
