package realstress

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

func mark(run, pid int, event string, ns int64, epoch string) JobMark {
	return JobMark{Run: run, PID: pid, Event: event, Ns: ns, Epoch: epoch}
}

// Each row is a run campaign's marks and the violation its check must
// report ("" for none).
func TestCheckRunMarks(t *testing.T) {
	tests := []struct {
		name  string
		marks []JobMark
		want  string
	}{
		{"runs one after another", []JobMark{
			mark(1, 10, "enter", 100, "1"), mark(1, 10, "exit", 200, "1"),
			mark(2, 20, "enter", 300, "2"), mark(2, 20, "exit", 400, "2")}, ""},
		{"a background job outlives its command, the next run waits", []JobMark{
			mark(1, 10, "enter", 100, "1"), mark(1, 11, "enter", 120, "1"), mark(1, 10, "exit", 150, "1"),
			mark(1, 11, "exit", 500, "1"), mark(2, 20, "enter", 600, "2"), mark(2, 20, "exit", 700, "2")}, ""},
		{"the next run starts while the background job works", []JobMark{
			mark(1, 10, "enter", 100, "1"), mark(1, 11, "enter", 120, "1"), mark(1, 10, "exit", 150, "1"),
			mark(2, 20, "enter", 300, "2"), mark(1, 11, "exit", 500, "1"), mark(2, 20, "exit", 700, "2")},
			"run 2 (epoch 2, pids [20]) started at +0.000ms while run 1's tree (epoch 1, pids [10 11]) worked until +0.000ms"},
		{"a run inside a long run that started two runs before", []JobMark{
			mark(1, 10, "enter", 100, "1"), mark(1, 10, "exit", 900, "1"),
			mark(2, 20, "enter", 200, "2"), mark(2, 20, "exit", 300, "2"),
			mark(3, 30, "enter", 400, "3"), mark(3, 30, "exit", 500, "3")}, "run 3 (epoch 3, pids [30]) started at +0.000ms while run 1's tree"},
		{"an epoch that does not rise", []JobMark{
			mark(1, 10, "enter", 100, "5"), mark(1, 10, "exit", 200, "5"),
			mark(2, 20, "enter", 300, "4"), mark(2, 20, "exit", 400, "4")}, "run 2 has epoch 4, not above run 1's epoch 5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CheckRunMarks(tt.marks)
			if tt.want == "" {
				if len(got) != 0 {
					t.Fatalf("violations %q, want none", got)
				}
				return
			}
			if len(got) == 0 || !strings.Contains(strings.Join(got, "\n"), tt.want) {
				t.Fatalf("violations %q, want one saying %q", got, tt.want)
			}
		})
	}
}

// registerCommand marks an overlap for another registered command that
// still runs (the test's parent process), and none for one that has
// exited or whose PID now names another process (nor for itself).
func TestRegisterCommandMarksOnlyLiveOverlaps(t *testing.T) {
	dir := t.TempDir()
	registry, marks := dir+"/registry.jsonl", dir+"/marks.jsonl"
	exited := exec.Command("true")
	if err := exited.Run(); err != nil {
		t.Fatal(err)
	}
	for _, e := range []registryEntry{
		{Run: 1, PID: exited.Process.Pid, Start: "1"},       // gone
		{Run: 2, PID: os.Getppid(), Start: "no such start"}, // a live PID, another process's start
	} {
		if err := appendJSONLine(registry, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := registerCommand(registry, marks, 3); err != nil {
		t.Fatal(err)
	}
	got, err := readJSONLines[JobMark](marks)
	if err != nil || len(got) != 0 {
		t.Fatalf("overlaps with commands that no longer run: %v %v", got, err)
	}
	// The parent process (go test) is a command that still runs.
	parentStart, err := processStart(os.Getppid())
	if err != nil {
		t.Fatal(err)
	}
	if err := appendJSONLine(registry, registryEntry{Run: 2, PID: os.Getppid(), Start: parentStart}); err != nil {
		t.Fatal(err)
	}
	if err := registerCommand(registry, marks, 4); err != nil {
		t.Fatal(err)
	}
	got, err = readJSONLines[JobMark](marks)
	if err != nil || len(got) != 1 || got[0].Event != "overlap" || got[0].Run != 4 || got[0].OtherRun != 2 || got[0].OtherPID != os.Getppid() {
		t.Fatalf("the overlap with a live command: %+v %v", got, err)
	}
	violations := CheckDirleaseRunMarks([]JobMark{{Run: 5, PID: 50, Event: "enter"},
		{Run: 5, PID: 50, Event: "overlap", OtherRun: 3, OtherPID: 30}})
	if len(violations) != 1 || !strings.Contains(violations[0], "run 5's command (pid 50) started in its directory while run 3's command (pid 30) still ran there") {
		t.Fatalf("violations %v", violations)
	}
}
