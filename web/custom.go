package web

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"html/template"
	"os"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// maxTemplate bounds a custom template file.
const maxTemplate = 1 << 20

// loadTemplate reads and parses a room's own waiting page (page.template),
// then renders it once with sample data, so that a mistake is a config
// error naming the file and line, at load, never a broken page later.
//
// The template gets the same data as the built-in one (see waitingView):
// .Lang .Title .DocTitle .State .Heading .Lead .Position .Ahead .Behind
// .Total .ETA .Percent .PercentText .Updated .UpdatedISO .MetaRefresh .Next
// .LeaveTo .Message .T (the built-in texts by key) and, to keep the page
// updating itself, .CSS, .JS and .Data: put <style>{{.CSS}}</style> and
// <script type="application/json" id="wr-data">{{.Data}}</script><script>{{.JS}}</script>
// in it, with the element ids of templates/waiting.html. The page's
// Content-Security-Policy allows only those inline blocks, and the same
// files served under StaticPrefix (.Style.URL, .Script.URL, as the
// built-in page loads them).
func loadTemplate(path string) (*template.Template, [sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	info, err := os.Stat(path)
	if err != nil {
		return nil, sum, fmt.Errorf("cannot read %s: %w", path, unwrapPath(err))
	}
	if info.Size() > maxTemplate {
		return nil, sum, fmt.Errorf("%s is %d bytes, more than %d", path, info.Size(), maxTemplate)
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, sum, fmt.Errorf("cannot read %s: %w", path, unwrapPath(err))
	}
	sum = sha256.Sum256(src)
	// Named by its path, so that html/template's errors say "path:line".
	t, err := template.New(path).Parse(string(src))
	if err != nil {
		return nil, sum, err
	}
	sample := (&Pages{now: time.Now}).view("en", View{Room: "sample", State: waitroom.AnswerWaiting, Position: 3, Ahead: 2, Behind: 5, Line: 8,
		StatusURL: "/.waitroom/status?room=sample", LeaveURL: "/.waitroom/leave?room=sample"})
	if err := t.Execute(&bytes.Buffer{}, sample); err != nil {
		return nil, sum, err
	}
	return t, sum, nil
}

func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
