package cost

import (
	"sync"
	"time"
)

// Usage is what the selection spent between Start and Stop. It is plain
// data; the stored form of a run's costs belongs to package results.
type Usage struct {
	Samples    int
	Wall       time.Duration // first to last reading
	CPUSeconds float64       // user + system over the window
	CPUMean    float64       // cores (1.0 = one core busy): CPUSeconds / Wall
	CPUMax     float64       // highest cores over one interval (±10 ms of CPU: ±0.05 core at 200 ms)
	MemMean    int64         // bytes, mean over the samples: summed RSS, or a cgroup's working set
	MemMax     int64         // bytes, highest sample
	Processes  int           // processes seen at once (max over samples)
}

// DefaultEvery is the sampling interval when Start is given none.
const DefaultEvery = 200 * time.Millisecond

// minEvery is the shortest interval: the kernel counts process CPU in
// 10 ms ticks, so a shorter one reads mostly rounding.
const minEvery = 10 * time.Millisecond

// Sampler reads a selection at a fixed interval between Start and Stop.
//
// Memory is the sum of the processes' resident sets (shared pages, as
// between an nginx master and its workers, count once per process), or a
// cgroup's working set. CPU is the kernel's user+system time: a process
// that exits keeps what it was last seen with (up to one interval of its
// last CPU is lost; a cgroup loses nothing), a process born in the window is
// counted from its birth.
type Sampler struct {
	src   source
	every time.Duration
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
	acc   accumulator
	usage Usage
}

// Start takes a first reading of sel at once — an error if it matches
// nothing — and then one every `every` until Stop: DefaultEvery if 0,
// at least 10 ms (the kernel counts a process's CPU in 10 ms ticks).
func Start(sel Selector, every time.Duration) (*Sampler, error) {
	if every <= 0 {
		every = DefaultEvery
	}
	every = max(every, minEvery)
	src, err := newSource(sel)
	if err != nil {
		return nil, err
	}
	r, err := src.read()
	if err != nil {
		return nil, err
	}
	s := &Sampler{
		src:   src,
		every: every,
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
		acc:   accumulator{minInterval: every / 2},
	}
	s.acc.add(r)
	go s.loop()
	return s, nil
}

func (s *Sampler) loop() {
	defer close(s.done)
	t := time.NewTicker(s.every)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.sample()
		}
	}
}

// sample takes one reading; a reading that fails after the first (a
// cgroup removed) counts as nothing running.
func (s *Sampler) sample() {
	r, err := s.src.read()
	if err != nil {
		r = reading{at: time.Now(), cpu: s.acc.last.cpu}
	}
	s.acc.add(r)
}

// Stop takes a last reading, ends the sampling and returns the usage of
// the window from Start to now. Later calls return the same Usage.
func (s *Sampler) Stop() Usage {
	s.once.Do(func() {
		close(s.stop)
		<-s.done
		s.sample()
		s.usage = s.acc.usage()
	})
	return s.usage
}

// accumulator reduces readings as they come, so memory does not grow with
// the length of the window.
type accumulator struct {
	minInterval time.Duration // shorter intervals are joined to the next one for CPUMax

	n           int
	first, last reading
	anchor      reading // start of the open interval
	cpuMax      float64
	memSum      float64
	memMax      int64
	procs       int
}

func (a *accumulator) add(r reading) {
	if a.n == 0 {
		a.first, a.anchor = r, r
	}
	a.n++
	a.last = r
	a.memSum += float64(r.mem)
	a.memMax = max(a.memMax, r.mem)
	a.procs = max(a.procs, r.procs)
	if wall := r.at.Sub(a.anchor.at); wall >= a.minInterval && wall > 0 {
		a.cpuMax = max(a.cpuMax, (r.cpu-a.anchor.cpu)/wall.Seconds())
		a.anchor = r
	}
}

func (a *accumulator) usage() Usage {
	u := Usage{
		Samples:    a.n,
		Wall:       a.last.at.Sub(a.first.at),
		CPUSeconds: a.last.cpu - a.first.cpu,
		CPUMax:     a.cpuMax,
		MemMax:     a.memMax,
		Processes:  a.procs,
	}
	if a.n > 0 {
		u.MemMean = int64(a.memSum / float64(a.n))
	}
	if w := u.Wall.Seconds(); w > 0 {
		u.CPUMean = u.CPUSeconds / w
		if a.anchor.at.Equal(a.first.at) {
			// No interval was long enough: the window is the only one.
			u.CPUMax = u.CPUMean
		}
	}
	return u
}
