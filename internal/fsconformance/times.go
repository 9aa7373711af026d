package fsconformance

import (
	"errors"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/leasekit/leasekit/env"
)

// The modification-time, truncation and positioned-I/O verbs (env.AttrFS,
// env.RandomAccess). Times cannot be compared across clocks, so a time
// renders against a fixed instant t0 (2001-09-09, long before either
// clock's now): "mtime=t0", "mtime>t0" (stamped since) or "mtime<t0".
//
//	chtimes path            Chtimes(path, t0, t0)
//	chtimes-omit path       Chtimes(path, zero, zero): both UTIME_OMIT
//	chtimes-mtime-omit path Chtimes(path, t0, zero): mtime left alone
//	mtime path              Stat(path)'s ModTime against t0
//	truncate path N         Truncate(path, N)
//	fmtime NAME             the held file's Stat ModTime against t0
//	fseek NAME OFF WHENCE   Seek: "pos=N" (WHENCE set|cur|end)
//	freadat NAME OFF LEN    ReadAt: the bytes read, "+EOF" when short
//	ftruncate NAME N        Truncate on the held file
//	fwrite-at NAME DATA     Write on the held file (at its position)
var t0 = time.Unix(1_000_000_000, 123_456_789)

var whences = map[string]int{"set": env.SeekStart, "cur": env.SeekCurrent, "end": env.SeekEnd}

func (r *runner) timesStep(t *testing.T, verb string, a []string) string {
	if len(a) == 0 {
		t.Fatalf("%s: want an argument", verb)
	}
	switch verb {
	case "chtimes", "chtimes-omit", "chtimes-mtime-omit", "mtime", "truncate":
		return r.pathTimesStep(t, verb, a)
	}
	f, ok := r.held[a[0]]
	if !ok {
		t.Fatalf("%s %s: not held", verb, a[0])
	}
	ra, ok := f.(env.RandomAccess)
	if !ok {
		return "not-random-access"
	}
	switch verb {
	case "fmtime":
		info, err := f.Stat()
		return r.mtime(info, err)
	case "fseek":
		pos, err := ra.Seek(atoi(t, arg(t, a, 1)), whences[arg(t, a, 2)])
		if err != nil {
			return r.result(err)
		}
		return "pos=" + strconv.FormatInt(pos, 10)
	case "freadat":
		buf := make([]byte, atoi(t, arg(t, a, 2)))
		n, err := ra.ReadAt(buf, atoi(t, arg(t, a, 1)))
		switch {
		case errors.Is(err, io.EOF):
			return strconv.Quote(string(buf[:n])) + "+EOF"
		case err != nil:
			return r.result(err)
		}
		return strconv.Quote(string(buf[:n]))
	case "ftruncate":
		return r.result(ra.Truncate(atoi(t, arg(t, a, 1))))
	case "fwrite-at":
		_, err := f.Write([]byte(arg(t, a, 1)))
		return r.result(err)
	}
	t.Fatalf("unknown verb %q", verb)
	return ""
}

func (r *runner) pathTimesStep(t *testing.T, verb string, a []string) string {
	name := r.path(a[0])
	if verb == "mtime" {
		info, err := r.fsys.Stat(name)
		return r.mtime(info, err)
	}
	attrs, ok := r.fsys.(env.AttrFS)
	if !ok {
		return "not-an-attr-fs"
	}
	switch verb {
	case "chtimes":
		return r.result(attrs.Chtimes(name, t0, t0))
	case "chtimes-omit":
		return r.result(attrs.Chtimes(name, time.Time{}, time.Time{}))
	case "chtimes-mtime-omit":
		return r.result(attrs.Chtimes(name, t0, time.Time{}))
	}
	return r.result(attrs.Truncate(name, atoi(t, arg(t, a, 1))))
}

// mtime renders info's modification time against t0.
func (r *runner) mtime(info env.FileInfo, err error) string {
	switch {
	case err != nil:
		return r.result(err)
	case info.ModTime().Equal(t0):
		return "mtime=t0"
	case info.ModTime().After(t0):
		return "mtime>t0"
	}
	return "mtime<t0"
}

func arg(t *testing.T, a []string, i int) string {
	if i >= len(a) {
		t.Fatalf("missing argument %d in %q", i+1, a)
	}
	return a[i]
}
