package web

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/conf"
)

// PreviewLinker makes the link of a preview on the gateway's public side:
// the gateway seals p with its current keys and puts its public address
// (admin.public_url) in front, or answers a path when it has none.
type PreviewLinker func(p waitroom.Preview) (string, error)

// previewBody is POST /admin/api/rooms/{room}/preview's body.
type previewBody struct {
	State    string `json:"state"`
	Position int64  `json:"position"`
	Lang     string `json:"lang"`
	TTL      string `json:"ttl"`
}

// languages are the languages the waiting page is written in (messages).
func languages() []string {
	out := make([]string, 0, len(messages))
	for lang := range messages {
		out = append(out, lang)
	}
	sort.Strings(out)
	return out
}

// preview is POST /admin/api/rooms/{room}/preview: {"state", "position",
// "lang", "ttl"} answers {"url", "expires"}, a signed link that shows the
// room's page in that state to whoever opens it, until it expires, and
// takes no place.
func (a *admin) preview(w http.ResponseWriter, r *http.Request) {
	if a.Preview == nil {
		apiError(w, http.StatusNotImplemented, "preview links are not available on this gateway")
		return
	}
	name, ok := a.room(w, r)
	var body previewBody
	if !ok || !decode(w, r, &body) {
		return
	}
	now := time.Now()
	p, err := body.build(name, now)
	if err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	link, err := a.Preview(p)
	if err != nil {
		a.Log.Warn("making a preview link", zap.String("room", name), zap.Error(err))
		apiError(w, http.StatusInternalServerError, "the preview link could not be made")
		return
	}
	a.Log.Info("preview link made", zap.String("room", name), zap.String("state", string(p.State)),
		zap.Int64("position", p.Position), zap.String("lang", p.Lang), zap.Int64("expires", p.Expires))
	writeJSON(w, http.StatusOK, map[string]any{"url": link, "expires": time.Unix(p.Expires, 0).UTC().Format(time.RFC3339)})
}

// build checks the body, each problem worded for the operator.
func (b previewBody) build(room string, now time.Time) (waitroom.Preview, error) {
	state, ok := waitroom.PreviewState(b.State)
	if !ok {
		return waitroom.Preview{}, fmt.Errorf("state: must be one of %s, got %q", strings.Join(waitroom.PreviewStateNames(), ", "), b.State)
	}
	switch {
	case state == waitroom.AnswerWaiting && (b.Position < 1 || b.Position > waitroom.MaxPreviewPosition):
		return waitroom.Preview{}, fmt.Errorf("position: must be from 1 to %d for state waiting, got %d", waitroom.MaxPreviewPosition, b.Position)
	case state != waitroom.AnswerWaiting && b.Position != 0:
		return waitroom.Preview{}, fmt.Errorf("position: only for state waiting (a visitor in state %q is shown none), got %d", b.State, b.Position)
	}
	if _, ok := messages[b.Lang]; !ok && b.Lang != "" {
		return waitroom.Preview{}, fmt.Errorf(`lang: must be one of %s, or "" for the viewer's browser and the room's page.locale, got %q`,
			strings.Join(languages(), ", "), b.Lang)
	}
	ttl := waitroom.DefaultPreviewTTL
	if b.TTL != "" {
		d, err := conf.ParseDuration(b.TTL)
		if err != nil || d < time.Second || d > waitroom.MaxPreviewTTL {
			return waitroom.Preview{}, fmt.Errorf(`ttl: want a duration from 1s to %v such as "15m" (default), got %q`, waitroom.MaxPreviewTTL, b.TTL)
		}
		ttl = d
	}
	return waitroom.Preview{Room: room, State: state, Position: b.Position, Lang: b.Lang, Expires: now.Add(ttl).Unix()}, nil
}
