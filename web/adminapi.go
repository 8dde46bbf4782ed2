package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/waitroom/waitroom/waitroom"
)

// RoomView is a room as the admin API shows it.
type RoomView struct {
	Name string `json:"name"`
	// Source is where the room comes from: "yaml", "api" or "template";
	// Template names the template of a room filled in from one.
	Source   string `json:"source"`
	Template string `json:"template,omitempty"`
	// Closing is true for an API room being deleted: it stays in service,
	// closed, until the sessions inside end, then its routes go.
	Closing    bool          `json:"closing,omitempty"`
	Mode       waitroom.Mode `json:"mode"`
	Configured LimitsView    `json:"configured"`
	Override   *OverrideView `json:"override"`
	// Effective is the limits as set, the configuration's with the
	// override's on top: what the room admits by whenever it admits. A
	// paused or closed room keeps its max_active here (Mode says it admits
	// nobody now), so a client that writes back what it read never stores
	// the 0 that the store is handed while paused.
	Effective  LimitsView `json:"effective"`
	Waiting    int64      `json:"waiting"`
	Active     int64      `json:"active"`
	LastMinute int64      `json:"admitted_last_minute"`
	Totals     TotalsView `json:"totals"`
	BackETA    *int64     `json:"eta_back_seconds"`
	// WaitP50 and WaitP90 are the median and 90th percentile wait of the
	// visitors this instance let in over the last 15 minutes; null without.
	WaitP50 *int64 `json:"wait_p50_seconds"`
	WaitP90 *int64 `json:"wait_p90_seconds"`
	StoreUp bool   `json:"store_up"`
	// StoreState says why the store does not answer: failing over (no
	// master for now) or unreachable; "ok" while it answers.
	StoreState waitroom.StoreState `json:"store_state"`
	Title      string              `json:"title,omitempty"`
	Message    string              `json:"message"` // the notice the waiting page shows now
	Schedule   *ScheduleView       `json:"schedule,omitempty"`
	Guards     GuardsView          `json:"guards"`
	// Autopilot is where the room's autopilot stands; absent without one.
	Autopilot *AutopilotView `json:"autopilot,omitempty"`
	// Watch is what this instance saw of the room's newcomers (a
	// template's rooms together); absent without metrics.
	Watch *waitroom.Watched `json:"watch,omitempty"`
}

// TemplateView is a room template: how many rooms it fills on this
// instance now (each listed in "rooms" with its template), and its bounds.
type TemplateView struct {
	Name      string `json:"name"`
	Rooms     int    `json:"rooms"`
	MaxRooms  int    `json:"max_rooms"`
	IdleAfter int64  `json:"idle_after_seconds"`
}

// GuardsView is what stands between a newcomer and a place, as configured,
// and what it turned away so far on every instance.
type GuardsView struct {
	JoinLimit      string `json:"join_limit"` // new tickets per client network, "300/m" or "unlimited"
	MaxWaiting     int64  `json:"max_waiting"`
	Challenge      string `json:"challenge"`                // "off" or "pow"
	ChallengeBits  int    `json:"challenge_bits,omitempty"` // the base work, 2^bits hashes
	Identity       string `json:"identity"`                 // "off", "optional" or "required"
	SessionClients int    `json:"session_clients"`
	SessionMax     int64  `json:"session_max_seconds"`
	Issued         int64  `json:"tickets_issued"`
	Limited        int64  `json:"refused_quota"`
	Full           int64  `json:"refused_full"`
}

// ScheduleView is a scheduled sale: its times, where it stands, and the
// seed of the opening's shuffle, from which anyone can recompute the order
// (waitroom.ShuffleOrder: SHA-1 of seed and visitor id, ascending).
type ScheduleView struct {
	PrequeueFrom *time.Time `json:"prequeue_from,omitempty"`
	OpensAt      *time.Time `json:"opens_at,omitempty"`
	ClosesAt     *time.Time `json:"closes_at,omitempty"`
	Phase        string     `json:"phase"`
	ShuffleSeed  string     `json:"shuffle_seed,omitempty"`
}

// LimitsView is a room's limits and mode.
type LimitsView struct {
	MaxActive int           `json:"max_active"`
	AdmitRate string        `json:"admit_rate"`
	Mode      waitroom.Mode `json:"mode,omitempty"`
}

// OverrideView is a runtime override; absent fields keep the configuration.
type OverrideView struct {
	MaxActive *int          `json:"max_active,omitempty"`
	AdmitRate string        `json:"admit_rate,omitempty"`
	Mode      waitroom.Mode `json:"mode,omitempty"`
	Changed   time.Time     `json:"changed,omitzero"`
}

// TotalsView counts everyone who went through the room, on every instance.
type TotalsView struct {
	Joined    int64 `json:"joined"`
	Admitted  int64 `json:"admitted"`
	Released  int64 `json:"released"`
	Expired   int64 `json:"expired"`
	Abandoned int64 `json:"abandoned"`
}

func (a *admin) view(name string) RoomView {
	info, _ := a.Rooms.Info(name)
	eff, st := info.Effective, info.Stats
	set := eff.Override.Set(info.Room)
	v := RoomView{
		Name: name, Title: info.Room.Title, Mode: eff.Mode, Message: info.Message,
		Source: info.Room.Source, Template: info.Room.Template, Closing: info.Room.Closing,
		Configured: LimitsView{MaxActive: info.Room.Limits.MaxActive, AdmitRate: info.Room.Limits.AdmitRate.String(), Mode: info.Room.Mode},
		Effective:  LimitsView{MaxActive: set.MaxActive, AdmitRate: set.AdmitRate.String()},
		Waiting:    st.Waiting, Active: st.Active, LastMinute: st.AdmittedLastMinute,
		Totals:  TotalsView{st.Joined, st.AdmittedTotal, st.Released, st.Expired, st.Abandoned},
		StoreUp: !a.Rooms.StoreDown(),
	}
	v.StoreState = a.storeState(v.StoreUp)
	if v.Source == "" {
		v.Source = waitroom.SourceFile
	}
	if o := eff.Override; !o.IsZero() {
		ov := &OverrideView{MaxActive: o.MaxActive, Mode: o.Mode, Changed: o.Changed}
		if o.AdmitRate != nil {
			ov.AdmitRate = o.AdmitRate.String()
		}
		v.Override = ov
	}
	if sc := info.Room.Schedule; sc != (waitroom.Schedule{}) {
		at := func(t time.Time) *time.Time {
			if t.IsZero() {
				return nil
			}
			return &t
		}
		v.Schedule = &ScheduleView{PrequeueFrom: at(sc.PrequeueFrom), OpensAt: at(sc.OpensAt), ClosesAt: at(sc.ClosesAt),
			Phase: info.Phase.String(), ShuffleSeed: info.ShuffleSeed}
	}
	if info.WaitsOK {
		p50, p90 := int64(info.WaitP50/time.Second), int64(info.WaitP90/time.Second)
		v.WaitP50, v.WaitP90 = &p50, &p90
	}
	if info.BackETAOK {
		s := int64(info.BackETA / time.Second)
		v.BackETA = &s
	}
	v.Guards = guards(info.Room, st)
	v.Autopilot = autopilotView(eff.Autopilot)
	if a.Watch != nil {
		label := name
		if v.Template != "" {
			label = v.Template // the metrics count a template's rooms under its name
		}
		if w, ok := a.Watch(label); ok {
			v.Watch = &w
		}
	}
	return v
}

func guards(room waitroom.Room, st waitroom.Stats) GuardsView {
	lim := room.Limits
	g := GuardsView{JoinLimit: lim.JoinLimit.String(), MaxWaiting: lim.MaxWaiting, Challenge: waitroom.ChallengeOff,
		Identity: "off", SessionClients: lim.SessionClients, SessionMax: int64(lim.SessionMax / time.Second),
		Issued: st.Issued, Limited: st.Limited, Full: st.Full}
	if room.Challenge != nil {
		g.Challenge, g.ChallengeBits = waitroom.ChallengePoW, room.Challenge.Base
	}
	switch {
	case room.Identity.Required():
		g.Identity = "required"
	case room.Identity != nil:
		g.Identity = "optional"
	}
	return g
}

func (a *admin) listRooms(w http.ResponseWriter, r *http.Request) {
	rooms := make([]RoomView, 0)
	for _, name := range a.Rooms.Names() {
		rooms = append(rooms, a.view(name))
	}
	templates := make([]TemplateView, 0)
	for _, t := range a.Rooms.Templates() {
		templates = append(templates, TemplateView{Name: t.Name, Rooms: t.Rooms, MaxRooms: t.MaxRooms, IdleAfter: int64(t.IdleAfter / time.Second)})
	}
	writeJSON(w, http.StatusOK, map[string]any{"rooms": rooms, "templates": templates})
}

func (a *admin) getRoom(w http.ResponseWriter, r *http.Request) {
	if name, ok := a.room(w, r); ok {
		writeJSON(w, http.StatusOK, a.view(name))
	}
}

func (a *admin) history(w http.ResponseWriter, r *http.Request) {
	name, ok := a.room(w, r)
	if !ok {
		return
	}
	points, _ := a.Rooms.History(name)
	writeJSON(w, http.StatusOK, map[string]any{
		"room": name, "step_seconds": int(waitroom.HistoryStep / time.Second), "points": points,
	})
}

// patch is PATCH /admin/api/rooms/{room}: absent fields stay as they are.
type patch struct {
	MaxActive *int    `json:"max_active"`
	AdmitRate *string `json:"admit_rate"`
	Mode      *string `json:"mode"`
	Message   *string `json:"message"`
}

// maxLimit bounds max_active from the API, as the configuration does.
const maxLimit = 1_000_000_000

func (p patch) override() (waitroom.Override, error) {
	var o waitroom.Override
	if p.MaxActive == nil && p.AdmitRate == nil && p.Mode == nil && p.Message == nil {
		return o, errors.New("nothing to change: give max_active, admit_rate, mode or message")
	}
	if p.Message != nil {
		if err := CheckMessage(*p.Message); err != nil {
			return o, fmt.Errorf("message: %w", err)
		}
		o.Message = p.Message
	}
	if p.MaxActive != nil {
		if *p.MaxActive < 0 || *p.MaxActive > maxLimit {
			return o, fmt.Errorf("max_active: must be from 0 to %d, got %d", maxLimit, *p.MaxActive)
		}
		o.MaxActive = p.MaxActive
	}
	if p.AdmitRate != nil {
		rate, err := waitroom.ParseRate(*p.AdmitRate)
		if err != nil {
			return o, fmt.Errorf("admit_rate: %w", err)
		}
		o.AdmitRate = &rate
	}
	if p.Mode != nil {
		if *p.Mode == "" {
			return o, errors.New(`mode: must be "fifo", "random", "passthrough", "reject" or "paused", got ""`)
		}
		m, err := waitroom.ParseMode(*p.Mode)
		if err != nil {
			return o, fmt.Errorf("mode: %w", err)
		}
		o.Mode, o.By = m, "admin"
	}
	return o, nil
}

func (a *admin) patchRoom(w http.ResponseWriter, r *http.Request) {
	name, ok := a.room(w, r)
	var p patch
	if !ok || !decode(w, r, &p) {
		return
	}
	o, err := p.override()
	if err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	if err := a.Rooms.SetOverride(r.Context(), name, o); err != nil {
		a.storeFailed(w, "setting an override", err)
		return
	}
	a.changed(w, name, "override set", p)
}

func (a *admin) clearOverride(w http.ResponseWriter, r *http.Request) {
	name, ok := a.room(w, r)
	if !ok {
		return
	}
	if err := a.Rooms.ClearOverride(r.Context(), name); err != nil {
		a.storeFailed(w, "clearing an override", err)
		return
	}
	a.changed(w, name, "override cleared", nil)
}

// changed logs a change, which Rooms already shows on this instance (the
// others pick it up at their next tick), and answers with the room.
func (a *admin) changed(w http.ResponseWriter, name, what string, detail any) {
	b, _ := json.Marshal(detail)
	a.Log.Info(what, zap.String("room", name), zap.String("change", string(b)))
	writeJSON(w, http.StatusOK, a.view(name))
}

func (a *admin) admitNow(w http.ResponseWriter, r *http.Request) {
	name, ok := a.room(w, r)
	var body struct {
		Count *int `json:"count"`
	}
	if !ok || !decode(w, r, &body) {
		return
	}
	if body.Count == nil || *body.Count < 1 || *body.Count > 100_000 {
		apiError(w, http.StatusBadRequest, "count: must be from 1 to 100000")
		return
	}
	res, err := a.Rooms.AdmitNow(r.Context(), name, *body.Count)
	if errors.Is(err, waitroom.ErrRoomClosed) {
		apiError(w, http.StatusConflict, "mode: the room is closed (reject); set mode to fifo first")
		return
	}
	if err != nil {
		a.storeFailed(w, "admitting now", err)
		return
	}
	a.Log.Info("admitted by the admin API", zap.String("room", name), zap.Int("asked", *body.Count), zap.Int("admitted", res.Admitted))
	writeJSON(w, http.StatusOK, map[string]any{"asked": *body.Count, "admitted": res.Admitted, "abandoned": res.Abandoned, "room": a.view(name)})
}

func (a *admin) release(w http.ResponseWriter, r *http.Request) {
	name, ok := a.room(w, r)
	var body struct {
		Visitor string `json:"visitor"`
	}
	if !ok || !decode(w, r, &body) {
		return
	}
	if body.Visitor == "" || len(body.Visitor) > 64 {
		apiError(w, http.StatusBadRequest, "visitor: must be a visitor id (the Waitroom-Visitor header the site received)")
		return
	}
	err := a.Rooms.Release(r.Context(), name, body.Visitor, "admin", time.Time{}) // when it began is not known here
	switch {
	case errors.Is(err, waitroom.ErrNotFound):
		apiError(w, http.StatusNotFound, "visitor: no session or place in "+quote(name))
		return
	case err != nil:
		a.storeFailed(w, "releasing", err)
		return
	}
	a.Log.Info("released by the admin API", zap.String("room", name), zap.String("visitor", body.Visitor))
	_ = a.Rooms.Refresh(r.Context(), name)
	writeJSON(w, http.StatusOK, map[string]any{"released": body.Visitor, "room": a.view(name)})
}

// jsonProblem words a decoding error by the field it concerns.
func jsonProblem(err error) string {
	var typ *json.UnmarshalTypeError
	var syn *json.SyntaxError
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &typ) && typ.Field == "":
		return "want a JSON object, got a JSON " + typ.Value
	case errors.As(err, &typ):
		return fmt.Sprintf("%s: want %s, got a JSON %s", typ.Field, jsonKind(typ.Type.Kind()), typ.Value)
	case errors.As(err, &syn):
		return fmt.Sprintf("not valid JSON at byte %d", syn.Offset)
	case errors.As(err, &tooBig):
		return fmt.Sprintf("larger than %d bytes", tooBig.Limit)
	case errors.Is(err, io.EOF):
		return "empty body; want a JSON object"
	}
	// json's own wording for unknown fields names them: json: unknown field "x".
	return strings.TrimPrefix(err.Error(), "json: ")
}

// jsonKind names a Go kind the way the API's users think of JSON.
func jsonKind(k reflect.Kind) string {
	switch k {
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "a whole number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	}
	return "another type"
}

// storeState is the store's state for the dashboard: AdminOptions.StoreState
// when set, else ok while the rooms reach the store and unreachable when
// they do not.
func (a *admin) storeState(up bool) waitroom.StoreState {
	if a.StoreState != nil {
		return a.StoreState()
	}
	if up {
		return waitroom.StoreOK
	}
	return waitroom.StoreUnreachable
}
