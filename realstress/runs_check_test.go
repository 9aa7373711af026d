package realstress

import (
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
