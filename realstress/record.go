package realstress

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// Phases of a log line.
const (
	PhaseCall   = "call"
	PhaseReturn = "return"
	// PhaseReclaim: inside the acquire Seq, receiver.lock was moved into
	// quarantine (Input is a models.LeaseReclaim); between the call and
	// the return, or after the call of an acquire cut short.
	PhaseReclaim = "reclaim"
)

// Operation names in the logs.
const (
	OpAcquire     = "acquire"
	OpRelease     = "release"
	OpInspect     = "inspect"
	OpWithCurrent = "with-current"
)

// Record is one line of a worker's log: the call or the return of one
// operation. Input is the models input type of Op as JSON; Output is the
// models output type, or absent when the engine returned an error (the
// outcome is then unknown, and Error says what happened).
type Record struct {
	Worker int             `json:"worker"`
	Lane   int             `json:"lane"`
	Seq    int             `json:"seq"`
	Phase  string          `json:"phase"`
	Op     string          `json:"op"`
	Input  json.RawMessage `json:"input,omitempty"`
	Output json.RawMessage `json:"output,omitempty"`
	Error  string          `json:"error,omitempty"`
	Ns     int64           `json:"ns"`
}

// LogWriter appends records to a file, one write(2) per line, so a SIGKILL
// leaves whole lines plus at most one cut line at the end.
type LogWriter struct {
	file *os.File
}

// CreateLog opens path for appending (creating it).
func CreateLog(path string) (*LogWriter, error) {
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	return &LogWriter{file: file}, nil
}

// Append writes one record as one line.
func (w *LogWriter) Append(record Record) error {
	if record.Phase != PhaseCall && record.Phase != PhaseReturn && record.Phase != PhaseReclaim {
		panic("realstress: record phase " + record.Phase)
	}
	line, err := json.Marshal(record)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	n, err := w.file.Write(line)
	if err == nil && n != len(line) {
		err = io.ErrShortWrite
	}
	return err
}

// Close closes the log.
func (w *LogWriter) Close() error { return w.file.Close() }

// logLinesMax bounds the lines read from one log.
const logLinesMax = 1 << 20

// ReadLog reads a worker log. A last line without its newline was cut by a
// SIGKILL during its write and is ignored (for a call line, the operation
// never started). A malformed complete line is an error.
func ReadLog(path string) ([]Record, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if cut := bytes.LastIndexByte(data, '\n'); cut+1 != len(data) {
		data = data[:cut+1]
	}
	var records []Record
	scanner := bufio.NewScanner(bytes.NewReader(data))
	scanner.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for line := 1; scanner.Scan(); line++ {
		if line > logLinesMax {
			return nil, fmt.Errorf("%s: more than %d lines", path, logLinesMax)
		}
		var record Record
		decoder := json.NewDecoder(bytes.NewReader(scanner.Bytes()))
		decoder.DisallowUnknownFields()
		if err := decoder.Decode(&record); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		records = append(records, record)
	}
	if err := scanner.Err(); err != nil {
		return nil, errors.Join(fmt.Errorf("%s", path), err)
	}
	return records, nil
}

// CountCalls returns how many operations a log started.
func CountCalls(records []Record) int {
	calls := 0
	for _, record := range records {
		if record.Phase == PhaseCall {
			calls++
		}
	}
	return calls
}
