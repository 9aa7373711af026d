package workkit

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/sim"
)

// TestDoneRecordJudgesOnlyWhatWasPromised walks the oracle through the
// cases it must tell apart: a done state that survives or not, a call in
// flight at the power loss, a failed call that changed the state, a
// hostile write.
func TestDoneRecordJudgesOnlyWhatWasPromised(t *testing.T) {
	type step struct {
		op    string // "begin", "done", "fail", "spoil", "write", "power"
		state string // for write: the new state
	}
	cases := []struct {
		name         string
		steps        []step
		judged, fail bool
	}{
		{"nothing done yet", []step{{"write", "a"}, {"power", ""}}, false, false},
		{"done state survives", []step{{"begin", ""}, {"write", "a"}, {"done", ""}, {"power", ""}}, true, false},
		{"done state lost", []step{{"begin", ""}, {"write", "a"}, {"done", ""}, {"write", "absent"}, {"power", ""}}, true, true},
		{"call in flight", []step{{"begin", ""}, {"write", "a"}, {"done", ""}, {"begin", ""}, {"write", "b"}, {"power", ""}}, false, false},
		{"failed call changed it", []step{{"begin", ""}, {"write", "a"}, {"done", ""}, {"begin", ""}, {"write", "b"}, {"fail", ""}, {"write", "a"}, {"power", ""}}, false, false},
		{"failed call changed nothing", []step{{"begin", ""}, {"write", "a"}, {"done", ""}, {"begin", ""}, {"fail", ""}, {"write", "x"}, {"power", ""}}, true, true},
		{"hostile write", []step{{"begin", ""}, {"write", "a"}, {"done", ""}, {"spoil", ""}, {"write", "x"}, {"power", ""}}, false, false},
		{"hostile write, then a later done call", []step{{"begin", ""}, {"write", "a"}, {"done", ""}, {"spoil", ""}, {"write", "x"}, {"begin", ""}, {"write", "b"}, {"done", ""}, {"write", "lost"}, {"power", ""}}, true, true},
		{"failed call, then a later done call", []step{{"begin", ""}, {"write", "a"}, {"done", ""}, {"begin", ""}, {"write", "b"}, {"fail", ""}, {"begin", ""}, {"write", "c"}, {"done", ""}, {"write", "lost"}, {"power", ""}}, true, true},
		{"overlapping calls: snapshot when the last answers", []step{{"begin", ""}, {"begin", ""}, {"write", "a"}, {"done", ""}, {"write", "b"}, {"done", ""}, {"power", ""}}, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			state := "absent"
			d := DoneRecord{Name: "r", Read: func() (string, bool) { return state, true }}
			var judged bool
			var err error
			for _, s := range c.steps {
				switch s.op {
				case "begin":
					d.Begin()
				case "done", "fail":
					d.End(s.op == "done")
				case "spoil":
					d.Spoil()
				case "write":
					state = s.state
				case "power":
					judged, err = d.AfterPowerLoss()
				}
			}
			if judged != c.judged || (err != nil) != c.fail {
				t.Fatalf("judged %v, err %v; want judged %v, failure %v", judged, err, c.judged, c.fail)
			}
		})
	}
}

// After a power loss the oracle starts over from what is on disk.
func TestDoneRecordStartsOverAfterAPowerLoss(t *testing.T) {
	state := "a"
	d := DoneRecord{Name: "r", Read: func() (string, bool) { return state, true }}
	d.Begin() // dies with the power
	if judged, err := d.AfterPowerLoss(); judged || err != nil || d.InFlight() {
		t.Fatalf("a call in flight at the power loss: judged %v, err %v, in flight %v", judged, err, d.InFlight())
	}
	if judged, err := d.AfterPowerLoss(); !judged || err != nil {
		t.Fatalf("the state the reboot left is on disk: judged %v, err %v", judged, err)
	}
}

// TestStatesShowAsFmtDid pins FileState's and DirState's states, as
// messages show them, to the fmt formats they replaced ("%q", and "%s=%q;"
// per file), over random names and bytes: seed files compare the messages.
// The texts are one-to-one for names without '=', and so are the states,
// so two states are equal exactly when their texts are.
func TestStatesShowAsFmtDid(t *testing.T) {
	random := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte("a\"b\\c\n\t\x00\xff\xfe\x7f{}:;é€")
	bytesOf := func(n int) []byte {
		data := make([]byte, n)
		for i := range data {
			data[i] = alphabet[random.IntN(len(alphabet))]
		}
		return data
	}
	for round := range 40 {
		onVolume(t, func(volume *sim.Volume) error {
			root := volume.Root()
			names := map[string]bool{}
			for range random.IntN(5) {
				names[fmt.Sprintf("f%d;%s.json", random.IntN(100), bytesOf(random.IntN(3)))] = true
			}
			files := map[string][]byte{}
			for name := range names {
				if strings.ContainsAny(name, "/\x00") {
					continue
				}
				files[name] = bytesOf(random.IntN(30))
				if err := WriteRoot(root, "/d/"+name, lease.O_CREATE|lease.O_EXCL, files[name]); err != nil {
					return err
				}
				state, ok := FileState(root, "/d/"+name)()
				if want := fmt.Sprintf("%q", files[name]); !ok || showState(state) != want {
					t.Errorf("round %d: FileState shows %s, %v; want %s", round, showState(state), ok, want)
				}
			}
			var want strings.Builder
			for _, name := range slices.Sorted(maps.Keys(files)) {
				fmt.Fprintf(&want, "%s=%q;", name, files[name])
			}
			if state, ok := DirState(root, "/d", func(string) bool { return true })(); !ok || showState(state) != want.String() {
				t.Errorf("round %d: DirState shows %s, %v; want %s", round, showState(state), ok, want.String())
			}
			return nil
		})
	}
}

// TestAppendQuotedIsStrconvs holds appendQuoted's fast path to
// strconv.Quote: printable ASCII with quotes and backslashes, then
// control bytes, DEL, multi-byte runes and invalid UTF-8 at every position.
func TestAppendQuotedIsStrconvs(t *testing.T) {
	alphabet := []byte("a\"\\ ~\x7f\x00\n\t\x1f{}:é€\xff\xc3\x80\xe2")
	random := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		data := make([]byte, random.IntN(12))
		for i := range data {
			data[i] = alphabet[random.IntN(len(alphabet))]
		}
		prefix := []byte("x=")
		got := string(appendQuoted(prefix, data))
		if want := "x=" + strconv.Quote(string(data)); got != want {
			t.Fatalf("appendQuoted(%x) = %s, want %s", data, got, want)
		}
	}
}

// TestUnlessChangedReadsAgainOnlyAfterAChange checks the memo of a Read: it
// reads again whenever either generation moved, never while both stand,
// and every time on a volume without generations.
func TestUnlessChangedReadsAgainOnlyAfterAChange(t *testing.T) {
	reads := 0
	read := func() (string, bool) { reads++; return strconv.Itoa(reads), reads%3 != 0 }
	var names, data uint64
	versioned := true
	memo := UnlessChanged(read, func() (uint64, uint64, bool) { return names, data, versioned })
	steps := []struct {
		name      string
		change    func()
		wantState string
		wantOK    bool
	}{
		{"first read", func() {}, "1", true},
		{"nothing changed", func() {}, "1", true},
		{"a name changed", func() { names++ }, "2", true},
		{"still nothing", func() {}, "2", true},
		{"data changed", func() { data++ }, "3", false},
		{"a failed read is kept too", func() {}, "3", false},
		{"no generations", func() { versioned = false }, "4", true},
		{"no generations again", func() {}, "5", true},
		{"generations back", func() { versioned = true }, "6", false},
		{"kept", func() {}, "6", false},
	}
	for _, s := range steps {
		s.change()
		state, ok := memo()
		if state != s.wantState || ok != s.wantOK {
			t.Fatalf("%s: got (%q, %v), want (%q, %v)", s.name, state, ok, s.wantState, s.wantOK)
		}
	}
}
