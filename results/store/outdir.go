package store

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// dirStamp is the time in a default results directory's name.
const dirStamp = "20060102-150405"

// DefaultDir is the results directory a command writes to when -o names
// none: prefix and the time, PREFIX-YYYYMMDD-HHMMSS (sweep-20260102-150405).
func DefaultDir(prefix string, now time.Time) string {
	return prefix + "-" + now.Format(dirStamp)
}

// OutHelp is -o's help for a command whose default is DefaultDir(prefix):
// "results directory (default PREFIX-YYYYMMDD-HHMMSS)".
func OutHelp(prefix string) string {
	return "results directory (default " + prefix + "-YYYYMMDD-HHMMSS)"
}

// ResumeNeedsOut is the refusal of --resume without -o: what names what
// the directory holds ("sweep", "study", "run").
func ResumeNeedsOut(what string) error {
	return errors.New("--resume needs -o: the directory of the " + what + " to continue")
}

// OutDir is a command's results directory (-o), decided before anything
// starts: dir, or when it is empty DefaultDir(prefix, now), except on a
// resume (resume), which continues a directory that must be named
// (ResumeNeedsOut(what)); either checked that it can take results
// (CheckDir), the error naming -o and the directory.
func OutDir(dir, prefix string, resume bool, what string, now time.Time) (string, error) {
	if dir == "" {
		if resume {
			return "", ResumeNeedsOut(what)
		}
		dir = DefaultDir(prefix, now)
	}
	if err := CheckDir(dir); err != nil {
		return "", fmt.Errorf("-o %s: %w", dir, err)
	}
	return dir, nil
}

// ReadWith is how the results in dir are read: "loadgen report DIR", a
// note of ResultsLine.
func ReadWith(dir string) string { return "loadgen report " + dir }

// ResultsLine is the line a command's output ends with: where its results
// are, and notes on what they hold or how to read them,
// "results: DIR (NOTE; NOTE)".
func ResultsLine(dir string, notes ...string) string {
	return "results: " + dir + " (" + strings.Join(notes, "; ") + ")"
}

// ContinueWith says, when a run made of steps stopped before its end,
// that the steps it finished are kept and which command goes on from
// there: "finished steps are saved; continue with: COMMAND". whose, when
// set, says whose steps they are ("the study's").
func ContinueWith(whose, command string) string {
	if whose != "" {
		whose += " "
	}
	return whose + "finished steps are saved; continue with: " + command
}
