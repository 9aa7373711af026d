package require

import (
	"fmt"
	"reflect"
	"strings"
)

// Nil asserts that object is nil, or a nil pointer, map, slice, channel,
// function or interface.
func Nil(t TestingT, object any, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if !isNil(object) {
		fail(t, fmt.Sprintf("Expected nil, but got: %#v", object), msgAndArgs)
	}
}

// NotNil asserts that object is not nil (isNil's sense).
func NotNil(t TestingT, object any, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if isNil(object) {
		fail(t, "Expected value not to be nil.", msgAndArgs)
	}
}

func isNil(object any) bool {
	if object == nil {
		return true
	}
	value := reflect.ValueOf(object)
	switch value.Kind() {
	case reflect.Chan, reflect.Func, reflect.Interface, reflect.Map, reflect.Pointer, reflect.Slice, reflect.UnsafePointer:
		return value.IsNil()
	default:
		return false
	}
}

// Empty asserts that object is empty: nil, a zero value, a channel, map or
// slice of length 0, or a pointer to an empty value.
func Empty(t TestingT, object any, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if !isEmpty(object) {
		fail(t, fmt.Sprintf("Should be empty, but was %#v", object), msgAndArgs)
	}
}

// NotEmpty asserts that object is not empty (isEmpty's sense).
func NotEmpty(t TestingT, object any, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if isEmpty(object) {
		fail(t, fmt.Sprintf("Should NOT be empty, but was %#v", object), msgAndArgs)
	}
}

func isEmpty(object any) bool {
	if object == nil {
		return true
	}
	value := reflect.ValueOf(object)
	switch value.Kind() {
	case reflect.Chan, reflect.Map, reflect.Slice:
		return value.Len() == 0
	case reflect.Pointer:
		if value.IsNil() {
			return true
		}
		return isEmpty(value.Elem().Interface())
	default:
		return reflect.DeepEqual(object, reflect.Zero(value.Type()).Interface())
	}
}

// Zero asserts that i is the zero value of its type.
func Zero(t TestingT, i any, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if i != nil && !reflect.DeepEqual(i, reflect.Zero(reflect.TypeOf(i)).Interface()) {
		fail(t, fmt.Sprintf("Should be zero, but was %v", i), msgAndArgs)
	}
}

// NotZero asserts that i is not the zero value of its type.
func NotZero(t TestingT, i any, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if i == nil || reflect.DeepEqual(i, reflect.Zero(reflect.TypeOf(i)).Interface()) {
		fail(t, fmt.Sprintf("Should not be zero, but was %v", i), msgAndArgs)
	}
}

// Len asserts that object (an array, channel, map, slice or string) has
// length length.
func Len(t TestingT, object any, length int, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	got, ok := lengthOf(object)
	if !ok {
		fail(t, fmt.Sprintf("\"%v\" could not be applied builtin len()", object), msgAndArgs)
	}
	if got != length {
		fail(t, fmt.Sprintf("\"%v\" should have %d item(s), but has %d", object, length, got), msgAndArgs)
	}
}

func lengthOf(object any) (int, bool) {
	value := reflect.ValueOf(object)
	switch value.Kind() {
	case reflect.Array, reflect.Chan, reflect.Map, reflect.Slice, reflect.String:
		return value.Len(), true
	default:
		return 0, false
	}
}

// Contains asserts that s contains contains: a substring of a string, an
// element of an array or slice (ObjectsAreEqual), or a key of a map.
func Contains(t TestingT, s, contains any, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	ok, found := containsElement(s, contains)
	if !ok {
		fail(t, fmt.Sprintf("%#v could not be applied builtin len()", s), msgAndArgs)
	}
	if !found {
		fail(t, fmt.Sprintf("%s does not contain %#v", showContainer(s), contains), msgAndArgs)
	}
}

// NotContains asserts that s does not contain contains (Contains' sense).
func NotContains(t TestingT, s, contains any, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	ok, found := containsElement(s, contains)
	if !ok {
		fail(t, fmt.Sprintf("%#v could not be applied builtin len()", s), msgAndArgs)
	}
	if found {
		fail(t, fmt.Sprintf("%s should not contain %#v", showContainer(s), contains), msgAndArgs)
	}
}

// showContainer quotes a string (so a long text shows its line breaks)
// and prints anything else in Go syntax.
func showContainer(s any) string {
	if text, ok := s.(string); ok {
		return fmt.Sprintf("%q", text)
	}
	return fmt.Sprintf("%#v", s)
}

// containsElement says whether list can hold elements (ok) and whether
// element is among them (found).
func containsElement(list, element any) (ok, found bool) {
	listValue := reflect.ValueOf(list)
	switch listValue.Kind() {
	case reflect.String:
		elementValue := reflect.ValueOf(element)
		if elementValue.Kind() != reflect.String {
			return true, false
		}
		return true, strings.Contains(listValue.String(), elementValue.String())
	case reflect.Map:
		for _, key := range listValue.MapKeys() {
			if ObjectsAreEqual(key.Interface(), element) {
				return true, true
			}
		}
		return true, false
	case reflect.Array, reflect.Slice:
		for i := range listValue.Len() {
			if ObjectsAreEqual(listValue.Index(i).Interface(), element) {
				return true, true
			}
		}
		return true, false
	default:
		return false, false
	}
}

// Subset asserts that every element of subset (an array or slice) is in
// list, or for maps that every key of subset is in list with an equal
// value.
func Subset(t TestingT, list, subset any, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	subsetValue := reflect.ValueOf(subset)
	if subsetValue.Kind() == reflect.Map {
		listValue := reflect.ValueOf(list)
		for _, key := range subsetValue.MapKeys() {
			inList := listValue.MapIndex(key)
			if !inList.IsValid() || !ObjectsAreEqual(inList.Interface(), subsetValue.MapIndex(key).Interface()) {
				fail(t, fmt.Sprintf("%#v does not contain %#v", list, subset), msgAndArgs)
			}
		}
		return
	}
	for i := range subsetValue.Len() {
		element := subsetValue.Index(i).Interface()
		ok, found := containsElement(list, element)
		if !ok {
			fail(t, fmt.Sprintf("%#v has an unsupported type", list), msgAndArgs)
		}
		if !found {
			fail(t, fmt.Sprintf("%#v does not contain %#v", list, element), msgAndArgs)
		}
	}
}
