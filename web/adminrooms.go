package web

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"go.uber.org/zap"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/conf"
)

// RoomDefiner creates, replaces and deletes the rooms kept in the store
// (POST, PUT and DELETE on /admin/api/rooms). The gateway implements it:
// it checks a room as a file's room is checked.
type RoomDefiner interface {
	// DefineRoom creates the room name from body (the room's settings as
	// top-level fields, and "routes"), or replaces it. Errors:
	// *RoomProblems, *RoomConflict, waitroom.ErrExists,
	// waitroom.ErrNotFound, the store's.
	DefineRoom(ctx context.Context, name string, body []byte, replace bool) error
	// DeleteRoom removes the room name: at once when nobody is inside,
	// else it closes it (waitroom.Room.Closing) and removes it once the
	// sessions inside end. Errors: *RoomConflict, waitroom.ErrNotFound,
	// the store's.
	DeleteRoom(ctx context.Context, name string) error
}

// RoomProblems refuses a room for what its body says: each problem is
// "field: why", as in a configuration file. Kind, the most pressing kind
// among them, picks the status (problemStatus).
type RoomProblems struct {
	Kind     conf.Kind
	Problems []string
}

// problemStatus is the admin API's status for a refused room, by the kind
// of its problems; it covers every conf.Kind.
var problemStatus = map[conf.Kind]int{
	conf.Invalid:  http.StatusBadRequest, // the body is wrong in itself
	conf.Conflict: http.StatusConflict,   // the body asks for what a room in service holds
}

func (e *RoomProblems) Error() string { return strings.Join(e.Problems, "; ") }

// RoomConflict refuses an action on a room the file holds (409); a body
// that collides with a room in service is RoomProblems of kind Conflict.
type RoomConflict struct{ Reason string }

func (e *RoomConflict) Error() string { return e.Reason }

// createRoom is POST /admin/api/rooms: {"name": ..., settings..., "routes": [...]}.
func (a *admin) createRoom(w http.ResponseWriter, r *http.Request) {
	body, ok := a.roomBody(w, r)
	if !ok {
		return
	}
	var head struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(body, &head) // the body was read as JSON already
	var rest map[string]json.RawMessage
	_ = json.Unmarshal(body, &rest)
	delete(rest, "name")
	settings, _ := json.Marshal(rest)
	if head.Name == "" {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "name: required", "problems": []string{"name: required"}})
		return
	}
	a.define(w, r, head.Name, settings, false)
}

// replaceRoom is PUT /admin/api/rooms/{room}: the body is a room's
// settings and routes, as for POST but without the name.
func (a *admin) replaceRoom(w http.ResponseWriter, r *http.Request) {
	body, ok := a.roomBody(w, r)
	if !ok {
		return
	}
	a.define(w, r, r.PathValue("room"), body, true)
}

func (a *admin) deleteRoom(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("room")
	if a.answerDefine(w, "deleting room "+quote(name), a.Definer.DeleteRoom(r.Context(), name)) {
		a.Log.Info("room deleted through the admin API", zap.String("room", name))
		// A room with people inside stays in service, closed, until their
		// sessions end: the answer says so, and how many are inside.
		if info, ok := a.Rooms.Info(name); ok && info.Room.Closing {
			writeJSON(w, http.StatusAccepted, map[string]any{"deleted": name, "closing": true, "active": info.Stats.Active})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"deleted": name})
	}
}

func (a *admin) define(w http.ResponseWriter, r *http.Request, name string, body []byte, replace bool) {
	if !a.answerDefine(w, "defining room "+quote(name), a.Definer.DefineRoom(r.Context(), name, body, replace)) {
		return
	}
	status := http.StatusCreated
	if replace {
		status = http.StatusOK
	}
	writeJSON(w, status, a.view(name))
}

// answerDefine answers a RoomDefiner's error; true when there was none.
func (a *admin) answerDefine(w http.ResponseWriter, what string, err error) bool {
	var problems *RoomProblems
	var conflict *RoomConflict
	switch {
	case err == nil:
		return true
	case errors.As(err, &problems):
		status, ok := problemStatus[problems.Kind]
		if !ok {
			status = http.StatusBadRequest // a kind the table does not know yet
		}
		writeJSON(w, status, map[string]any{"error": problems.Error(), "problems": problems.Problems})
	case errors.As(err, &conflict):
		apiError(w, http.StatusConflict, conflict.Reason)
	case errors.Is(err, waitroom.ErrExists):
		apiError(w, http.StatusConflict, "a room of that name exists already; PUT replaces it")
	case errors.Is(err, waitroom.ErrNotFound):
		apiError(w, http.StatusNotFound, "no room of that name was created through the API")
	default:
		a.storeFailed(w, what, err)
	}
	return false
}

// roomBody reads a room definition: JSON only (what a cross-site form
// cannot send), one object, at most maxAdminBody bytes.
func (a *admin) roomBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if a.Definer == nil {
		apiError(w, http.StatusNotImplemented, "this gateway does not create rooms")
		return nil, false
	}
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/json" {
		apiError(w, http.StatusUnsupportedMediaType, "Content-Type: want application/json")
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxAdminBody))
	if err != nil {
		apiError(w, http.StatusRequestEntityTooLarge, "the body is larger than 64 KiB")
		return nil, false
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		apiError(w, http.StatusBadRequest, "want one JSON object: "+err.Error())
		return nil, false
	}
	return body, true
}

// reload is POST /admin/api/reload, for a sidecar or an operator: 200 with
// the result, 400 with the problems of a refused file (the running
// configuration stays), 409 when there is no file to read.
func (a *admin) reload(w http.ResponseWriter, r *http.Request) {
	if a.Reload == nil {
		apiError(w, http.StatusNotImplemented, "this gateway does not reload")
		return
	}
	result, problems, err := a.Reload(r.Context())
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, map[string]any{"result": result})
	case len(problems) > 0:
		writeJSON(w, http.StatusBadRequest, map[string]any{"result": "refused", "error": "the file was refused; the running configuration stays", "problems": problems})
	default:
		apiError(w, http.StatusConflict, err.Error())
	}
}
