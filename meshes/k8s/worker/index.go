package worker

import (
	"fmt"
	"os"
	"strconv"
)

// IndexEnv is where an Indexed Job gives each pod its completion index:
// the Job's contract with its workers.
const IndexEnv = "JOB_COMPLETION_INDEX"

// IndexFromEnv is this worker's index as its Job gives it (IndexEnv); ok
// is false when the variable is unset or empty (not a Job's pod: the
// --index flag's default stands).
func IndexFromEnv() (index int, ok bool, err error) {
	v := os.Getenv(IndexEnv)
	if v == "" {
		return 0, false, nil
	}
	i, err := strconv.Atoi(v)
	if err != nil {
		return 0, false, fmt.Errorf("%s %q: %v", IndexEnv, v, err)
	}
	return i, true, nil
}
