package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/conf"
	"github.com/waitroom/waitroom/waitroom/memstore"
)

// refusingDefiner refuses every room with err.
type refusingDefiner struct{ err error }

func (d refusingDefiner) DefineRoom(context.Context, string, []byte, bool) error { return d.err }
func (d refusingDefiner) DeleteRoom(context.Context, string) error               { return d.err }

// A refused room's status follows the kind of its problems, never their
// words: the same words answer 400 as Invalid and 409 as Conflict.
func TestAdmin_RefusedRoomStatusByKind(t *testing.T) {
	t.Parallel()
	const token = "rooms-admin-token-0123456789"
	store := memstore.New()
	t.Cleanup(func() { _ = store.Close() })
	rooms := waitroom.NewRooms(waitroom.RoomsOptions{Store: store})
	words := "routes[0]: same host and path as routes[1]"
	for kind, want := range map[conf.Kind]int{conf.Invalid: http.StatusBadRequest, conf.Conflict: http.StatusConflict} {
		def := refusingDefiner{&RoomProblems{Kind: kind, Problems: []string{words}}}
		h := NewAdmin(AdminOptions{Token: token, Rooms: rooms, Pages: newPages(t), Definer: def})
		req := httptest.NewRequest(http.MethodPut, "/admin/api/rooms/x", strings.NewReader(`{"routes":[]}`))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != want || !strings.Contains(rec.Body.String(), words) {
			t.Errorf("%s: %d %s, want %d with the problem", kind, rec.Code, rec.Body, want)
		}
	}
	for k := conf.Invalid; k <= conf.Conflict; k++ {
		if problemStatus[k] == 0 {
			t.Errorf("problemStatus has no status for %s", k)
		}
	}
}
