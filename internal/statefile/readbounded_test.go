package statefile

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"
)

// scriptedFile is a File whose Read answers from a script of chunks; the
// other methods are not called by ReadOpened.
type scriptedFile struct {
	File
	chunks [][]byte // a nil chunk is a read of nothing and no error
}

func (f *scriptedFile) Read(p []byte) (int, error) {
	if len(f.chunks) == 0 {
		return 0, io.EOF
	}
	chunk := f.chunks[0]
	n := copy(p, chunk)
	if n < len(chunk) {
		f.chunks[0] = chunk[n:]
	} else {
		f.chunks = f.chunks[1:]
	}
	return n, nil
}

func TestReadBoundedReadsWholeFilesWithinTheBound(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 300)
	tests := []struct {
		name     string
		chunks   [][]byte
		sizeHint int64
		want     []byte
		wantErr  string // "", "too large" or "no progress"
	}{
		{"size as stat said", [][]byte{[]byte("hello")}, 5, []byte("hello"), ""},
		{"grew after the stat", [][]byte{big[:100], big[100:]}, 10, big, ""},
		{"shrank after the stat", [][]byte{[]byte("hi")}, 50, []byte("hi"), ""},
		{"empty", nil, 0, []byte{}, ""},
		{"negative hint", [][]byte{[]byte("ab")}, -1, []byte("ab"), ""},
		{"empty reads then data", [][]byte{nil, nil, []byte("ok")}, 2, []byte("ok"), ""},
		{"over the bound", [][]byte{bytes.Repeat([]byte("y"), 513)}, 0, nil, "too large"},
		{"reads that never end", repeatChunks(nil, emptyReadsMax+1), 0, nil, "no progress"},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			got, err := ReadOpened(&scriptedFile{chunks: test.chunks}, "/ns/f.json", 512, test.sizeHint)
			switch {
			case test.wantErr == "no progress":
				if !errors.Is(err, io.ErrNoProgress) {
					t.Fatalf("err = %v, want io.ErrNoProgress", err)
				}
			case test.wantErr == "too large":
				var tooLarge *TooLargeError
				if !errors.As(err, &tooLarge) || tooLarge.MaxBytes != 512 {
					t.Fatalf("err = %v, want *TooLargeError", err)
				}
			case err != nil || !bytes.Equal(got, test.want):
				t.Fatalf("ReadOpened = %q, %v; want %q", got, err, test.want)
			}
		})
	}
}

func repeatChunks(chunk []byte, n int) [][]byte {
	chunks := make([][]byte, n)
	for i := range chunks {
		chunks[i] = chunk
	}
	return chunks
}

// lengthsFile is a scriptedFile that records the length of every slice
// Read is handed.
type lengthsFile struct {
	scriptedFile
	lengths []int
}

func (f *lengthsFile) Read(p []byte) (int, error) {
	f.lengths = append(f.lengths, len(p))
	return f.scriptedFile.Read(p)
}

// TestReadOpenedIntoReadsAsReadOpened: whatever buffer it is given,
// ReadOpenedInto hands every Read a slice of the length ReadOpened's would
// have (a simulated run hashes what each read returns), returns the same
// content and error, and reads into a buffer with room without allocating.
func TestReadOpenedIntoReadsAsReadOpened(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 700)
	scripts := []struct {
		chunks   [][]byte
		sizeHint int64
	}{
		{[][]byte{[]byte("hello")}, 5}, {[][]byte{big[:100], big[100:]}, 10}, {[][]byte{[]byte("hi")}, 50},
		{nil, 0}, {[][]byte{[]byte("ab")}, -1}, {[][]byte{nil, []byte("ok")}, 2}, {[][]byte{big}, 0}, {[][]byte{big}, 600},
	}
	for i, script := range scripts {
		want := &lengthsFile{scriptedFile: scriptedFile{chunks: slices.Clone(script.chunks)}}
		wantContent, wantErr := ReadOpened(want, "/ns/f.json", 512, script.sizeHint)
		for _, buf := range [][]byte{nil, make([]byte, 3), make([]byte, 0, 6), make([]byte, 10, 1024)} {
			got := &lengthsFile{scriptedFile: scriptedFile{chunks: slices.Clone(script.chunks)}}
			content, err := ReadOpenedInto(got, "/ns/f.json", 512, script.sizeHint, buf)
			if !slices.Equal(got.lengths, want.lengths) || !bytes.Equal(content, wantContent) || (err == nil) != (wantErr == nil) {
				t.Fatalf("script %d, buffer cap %d: reads %v, %q, %v; ReadOpened: reads %v, %q, %v",
					i, cap(buf), got.lengths, content, err, want.lengths, wantContent, wantErr)
			}
		}
	}
	buf, script := make([]byte, 0, 64), [][]byte{[]byte("hello")}
	file := &scriptedFile{}
	allocs := testing.AllocsPerRun(100, func() {
		file.chunks = script // read whole, so never changed
		if _, err := ReadOpenedInto(file, "/ns/f.json", 512, 5, buf); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("ReadOpenedInto with room made %v allocations", allocs)
	}
}
