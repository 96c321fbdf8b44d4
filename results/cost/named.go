package cost

// Named lists the processes a name:NAME selection matches now (by comm,
// or by executable when comm was cut or changed), unsorted.
func Named(name string) ([]int, error) {
	s := &procSource{sel: Selector{Name: name}, known: map[procKey]*proc{}}
	return s.matchName()
}

// Parent is the pid of pid's parent.
func Parent(pid int) (int, error) {
	var r procReader
	st, err := r.stat(pid)
	return st.ppid, err
}

// Comm is a process's name as the kernel keeps it (/proc/PID/comm: at
// most 15 bytes).
func Comm(pid int) (string, error) {
	var r procReader
	b, err := r.comm(pid)
	return string(b), err
}
