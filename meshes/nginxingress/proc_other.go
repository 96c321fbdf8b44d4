//go:build !linux

package nginxingress

import "errors"

var errUnsupported = errors.New("nginxingress: running nginx needs linux (/proc, process groups)")

func supported() error                { return errUnsupported }
func kill(int) error                  { return errUnsupported }
func children(int) ([]int, error)     { return nil, errUnsupported }
func groupMembers(int) ([]int, error) { return nil, errUnsupported }
func alive(int) bool                  { return false }
