//go:build linux

package nginxingress

import "loadgen/meshes/proxyproc"

// supported returns nil: nginx is run and watched through /proc and process
// groups.
func supported() error { return nil }

func kill(pid int) error                   { return proxyproc.Kill(pid) }
func children(ppid int) ([]int, error)     { return proxyproc.Children(ppid) }
func groupMembers(pgid int) ([]int, error) { return proxyproc.GroupMembers(pgid) }

// alive reports whether pid is a live (not zombie) nginx process.
func alive(pid int) bool { return proxyproc.Alive(pid, "nginx") }
