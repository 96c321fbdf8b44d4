package parked

import (
	"testing"
)

func waitOn(c chan int) { <-c }

// A goroutine blocked on a channel is seen waiting there, with its frame;
// one that has not blocked yet, or another state, is not.
func TestNow(t *testing.T) {
	if Now("chan receive", "parked.waitOn") {
		t.Fatal("a wait seen before any goroutine waits")
	}
	c := make(chan int)
	go waitOn(c)
	Wait(t, "chan receive", "parked.waitOn")
	if Now("IO wait", "parked.waitOn") {
		t.Error("the wait seen in the wrong state")
	}
	if Now("chan receive", "parked.waitOn", "no such frame") {
		t.Error("a wait seen without every frame")
	}
	c <- 1
}
