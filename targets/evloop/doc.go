// Package evloop is what the event loops of loadgen's targets share on
// Linux: an epoll set whose readiness the Go runtime waits for (Poller),
// the listening socket taken out of a net.Listener (Listener), and raw
// system calls on sockets that never block.
//
// A target's loop is one goroutine per Poller. It is parked in the Go
// netpoller, like any goroutine waiting for a socket, while its set has
// nothing ready; once woken it takes every ready event with a system call
// that does not block and handles them in turn, so a busy loop serves many
// requests per wake-up and parks only when it runs dry. Waiting in the
// netpoller rather than in epoll_wait keeps the runtime's view true: the
// loop holds no thread and no P while it waits, so the scheduler's monitor
// never hands a P off around a long wait, and every other goroutine of the
// process runs as usual.
//
// A target whose every connection stays on its loops (tcpecho) may have
// them keep their Ps instead (Group.KeepPs), when a P is left beside them
// for the rest of the process: each loop then waits in epoll_pwait itself,
// as the generator's loops do (package heldp), one system call per wait
// instead of the netpoller's wait, its wake-up and a poll of the set.
//
// Only Linux has it: the targets use it from files built for Linux and
// keep a goroutine per connection elsewhere.
package evloop
