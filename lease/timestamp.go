package lease

import (
	"strconv"
	"time"

	"github.com/leasekit/leasekit/internal/statefile"
)

// timestamp reads a record's createdAt. Schema 2 records are the port's
// own and hold Date.toISOString text, so RFC 3339 is required. Schema 1
// records are the original's, which accepted whatever Date.parse accepts; the
// port accepts the part of that every ECMAScript engine must accept (the
// Date Time String Format, date-only forms such as "2025-01-02" included:
// seedTimestamp) and RFC 3339. Engine-specific fallbacks of V8's legacy
// parser ("Jan 2 2025", "2025-1-2") stay refused: they are not ISO 8601.
func timestamp(object *statefile.Object, key string, schema int64) string {
	value := object.NonEmptyString(key)
	if object.Err() != nil {
		return ""
	}
	if _, err := time.Parse(time.RFC3339Nano, value); err == nil {
		return value
	}
	if schema == ownerSchemaLegacy && seedTimestamp(value) && seedTimeInRange(value) {
		return value
	}
	object.Fail("%s must be an ISO 8601 timestamp", key)
	return ""
}

// seedTimestamp reports whether value is in ECMAScript's Date Time String
// Format (ECMA-262, "Date Time String Format"):
//
//	YYYY[-MM[-DD]][THH:mm[:ss[.s+]][Z|±HH:mm]]
//
// with YYYY also written ±YYYYYY (but not -000000), month 01-12, day
// 01-31 (Date.parse does not check the month's length either), hour
// 00-24 where 24 only as 24:00[:00[.000]], and an offset only after a time.
func seedTimestamp(value string) bool {
	rest, ok := seedDate(value)
	if !ok {
		return false
	}
	if rest == "" {
		return true
	}
	if rest[0] != 'T' {
		return false
	}
	rest, ok = seedTime(rest[1:])
	if !ok {
		return false
	}
	return rest == "" || rest == "Z" || seedOffset(rest)
}

// seedDate consumes YYYY[-MM[-DD]] (or ±YYYYYY...) and returns the rest.
func seedDate(value string) (string, bool) {
	rest := value
	if rest != "" && (rest[0] == '+' || rest[0] == '-') {
		digits, tail, ok := fixedDigits(rest[1:], 6)
		if !ok || (rest[0] == '-' && digits == 0) {
			return "", false
		}
		rest = tail
	} else {
		var ok bool
		if _, rest, ok = fixedDigits(rest, 4); !ok {
			return "", false
		}
	}
	for _, limit := range []int{12, 31} {
		if rest == "" || rest[0] != '-' {
			return rest, true
		}
		field, tail, ok := fixedDigits(rest[1:], 2)
		if !ok || field < 1 || field > limit {
			return "", false
		}
		rest = tail
	}
	return rest, true
}

// seedTime consumes HH:mm[:ss[.s+]] and returns the rest.
func seedTime(value string) (string, bool) {
	hour, rest, ok := fixedDigits(value, 2)
	if !ok || hour > 24 || rest == "" || rest[0] != ':' {
		return "", false
	}
	minute, rest, ok := fixedDigits(rest[1:], 2)
	if !ok || minute > 59 {
		return "", false
	}
	nonZero := minute != 0
	if rest != "" && rest[0] == ':' {
		var second int
		if second, rest, ok = fixedDigits(rest[1:], 2); !ok || second > 59 {
			return "", false
		}
		nonZero = nonZero || second != 0
		if rest != "" && rest[0] == '.' {
			end := 1
			for end < len(rest) && '0' <= rest[end] && rest[end] <= '9' {
				nonZero = nonZero || rest[end] != '0'
				end++
			}
			if end == 1 {
				return "", false
			}
			rest = rest[end:]
		}
	}
	if hour == 24 && nonZero {
		return "", false
	}
	return rest, true
}

// dateTimeValueMax is ECMAScript's time value bound (TimeClip): a Date
// more than 8.64e15 ms from the epoch is NaN, and Date.parse returns NaN.
const dateTimeValueMax = 8.64e15

// seedTimeInRange reports whether a value seedTimestamp accepts is inside
// the ECMAScript Date range, ±8.64e15 ms around the epoch (-271821-04-20T00:00Z
// to +275760-09-13T00:00Z), as Date.parse requires ("+275761-01-01" is NaN
// there). Only the six-digit years reach the bound. As Date.parse does, a
// day past its month's end rolls over, hour 24 is the next day, digits
// after the milliseconds are dropped, and the offset is applied. A date-time
// without an offset (local time to Date.parse) is taken as UTC: the bound
// then moves by at most a day, for years no record holds.
func seedTimeInRange(value string) bool {
	if value[0] != '+' && value[0] != '-' {
		return true
	}
	year, _, _ := fixedDigits(value[1:], 6)
	if value[0] == '-' {
		year = -year
	}
	rest := value[7:]
	month, day := 1, 1
	if len(rest) >= 3 && rest[0] == '-' {
		month, rest, _ = fixedDigits(rest[1:], 2)
		if len(rest) >= 3 && rest[0] == '-' {
			day, rest, _ = fixedDigits(rest[1:], 2)
		}
	}
	hour, minute, second, milli, offset := 0, 0, 0, 0, 0
	if rest != "" && rest[0] == 'T' {
		hour, rest, _ = fixedDigits(rest[1:], 2)
		minute, rest, _ = fixedDigits(rest[1:], 2)
		if rest != "" && rest[0] == ':' {
			second, rest, _ = fixedDigits(rest[1:], 2)
			if rest != "" && rest[0] == '.' {
				digits := rest[1:]
				end := 0
				for end < len(digits) && '0' <= digits[end] && digits[end] <= '9' {
					end++
				}
				milli = fractionMillis(digits[:end])
				rest = digits[end:]
			}
		}
		if rest != "" && rest != "Z" {
			offsetHours, tail, _ := fixedDigits(rest[1:], 2)
			offsetMinutes, _, _ := fixedDigits(tail[1:], 2)
			offset = offsetHours*60 + offsetMinutes
			if rest[0] == '-' {
				offset = -offset
			}
		}
	}
	t := time.Date(year, time.Month(month), day, hour, minute-offset, second, milli*int(time.Millisecond), time.UTC)
	ms := t.Unix()*1000 + int64(t.Nanosecond()/int(time.Millisecond))
	return ms >= -dateTimeValueMax && ms <= dateTimeValueMax
}

// fractionMillis is the milliseconds of a fraction's digits (the first
// three, as Date.parse reads them).
func fractionMillis(digits string) int {
	digits = (digits + "000")[:3]
	milli, _ := strconv.Atoi(digits)
	return milli
}

// seedOffset reports whether value is exactly ±HH:mm.
func seedOffset(value string) bool {
	if value == "" || (value[0] != '+' && value[0] != '-') {
		return false
	}
	hour, rest, ok := fixedDigits(value[1:], 2)
	if !ok || hour > 23 || rest == "" || rest[0] != ':' {
		return false
	}
	minute, rest, ok := fixedDigits(rest[1:], 2)
	return ok && minute <= 59 && rest == ""
}

// fixedDigits reads exactly n ASCII digits at the start of value.
func fixedDigits(value string, n int) (int, string, bool) {
	if len(value) < n {
		return 0, "", false
	}
	for i := 0; i < n; i++ {
		if value[i] < '0' || value[i] > '9' {
			return 0, "", false
		}
	}
	number, err := strconv.Atoi(value[:n])
	return number, value[n:], err == nil
}
