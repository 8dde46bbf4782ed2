package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// noticeGap is the gap of the notice subtest.
const noticeGap = time.Second

// testAutopilotNotice holds a store's coalescing of room.autopilot_changed
// to NoticeRecord.Note: the first limit is known, not news; one rise and
// one fall per gap, a fall not held back by the rise before it; a move
// held back goes out after the gap as the latest limit, from the limit
// last sent; a pin is recorded without a send.
func testAutopilotNotice(t *testing.T, e *env) {
	note := func(limit int, quietly bool) (bool, int, int) {
		t.Helper()
		ns, ok := waitroom.As[waitroom.AutopilotNotices](e.store())
		if !ok {
			t.Fatal("the store has no waitroom.AutopilotNotices")
		}
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		defer cancel()
		send, from, sent, err := ns.AutopilotNotice(ctx, e.room, limit, noticeGap, quietly)
		if err != nil {
			t.Fatalf("AutopilotNotice: %v", err)
		}
		return send, from, sent
	}
	check := func(what string, limit int, quietly, send bool, from, sent int) {
		t.Helper()
		s, f, n := note(limit, quietly)
		if s != send || (send && f != from) || n != sent {
			t.Fatalf("%s (limit %d): send %v from %d, sent %d; want %v from %d, sent %d", what, limit, s, f, n, send, from, sent)
		}
	}
	check("first", 10, false, false, 0, 10)
	check("unchanged", 10, false, false, 0, 10)
	rose := time.Now()
	check("a rise", 12, false, true, 10, 12)
	check("a second rise within the gap", 14, false, false, 0, 12)
	check("a fall after the rise", 8, false, true, 12, 8)
	check("a rise within the gap of the first", 9, false, false, 0, 8)
	check("a fall within the gap of the first", 7, false, false, 0, 8)
	check("back to the last sent", 8, false, false, 0, 8)
	check("a rise within the gap again", 11, false, false, 0, 8)
	within(t, rose, noticeGap, "a move held back within the gap")
	time.Sleep(noticeGap)
	check("after the gap: the latest, from the last sent", 11, false, true, 8, 11)
	check("a pin", 30, true, false, 0, 30)
	check("the pin again", 30, false, false, 0, 30)
}
