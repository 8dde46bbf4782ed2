package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// progressBar redraws one status line on a terminal about five times a
// second: how far the run is, and who is where.
type progressBar struct {
	w     io.Writer
	r     *runner
	total int
	quit  chan struct{}
	done  chan struct{}
}

// isTerminal says whether f is a character device, as a terminal is; a
// file or a pipe gets no progress line to fill with carriage returns.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func startProgress(w io.Writer, r *runner, total int) *progressBar {
	b := &progressBar{w: w, r: r, total: total, quit: make(chan struct{}), done: make(chan struct{})}
	go b.loop()
	return b
}

func (b *progressBar) loop() {
	defer close(b.done)
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			fmt.Fprint(b.w, "\r"+b.line()+"\x1b[K")
		case <-b.quit:
			fmt.Fprint(b.w, "\r"+b.line()+"\x1b[K\n")
			return
		}
	}
}

func (b *progressBar) line() string {
	const width = 24
	elapsed, total := b.r.since(), b.r.cfg.duration
	filled := min(width, int(float64(width)*elapsed.Seconds()/total.Seconds()))
	st := b.r.stats
	return fmt.Sprintf("[%s%s] %5.1fs/%v  joined %d/%d  waiting %d  admitted %d  errors %d",
		strings.Repeat("=", filled), strings.Repeat(" ", width-filled), elapsed.Seconds(), total,
		st.arrived.Load(), b.total, st.waiting.Load(), st.admitted.Load(), st.errored.Load())
}

// stop draws the last line and ends the bar; a nil bar does nothing.
func (b *progressBar) stop() {
	if b == nil {
		return
	}
	close(b.quit)
	<-b.done
}
