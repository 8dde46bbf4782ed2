package door

import (
	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/conf"
	"github.com/waitroom/waitroom/web"
)

// BuildRoom makes the room called name and its waiting page from their
// sections, with every check the two make of each other; the error lists
// every problem, keys relative to the room ("abandon_after",
// "page.refresh"). It is the only place the page's settings that the gate
// needs (Refresh, RefreshMax, Title, Message) are copied into the Room.
func BuildRoom(name string, rc waitroom.RoomConfig, pc web.PageConfig) (waitroom.Room, web.Page, error) {
	var p conf.Problems
	room, err := rc.Build(name)
	p.Nest("", err)
	page, perr := pc.Build()
	p.Nest("page.", perr)
	// A visitor far back polls every page.refresh_max; dropping it sooner
	// than two missed polls would drop people still watching their page.
	if err == nil && room.Limits.AbandonAfter < 2*page.RefreshMax {
		p.Add("abandon_after", "must be at least twice page.refresh_max (%s), got %q", pc.RefreshMax, rc.AbandonAfter)
	}
	room.Refresh, room.RefreshMax, room.Title, room.Message = page.Refresh, page.RefreshMax, page.Title, page.Message
	room.Limits.PlaceWithin = waitroom.PlaceWithin(room.Limits.AbandonAfter, page.Refresh)
	return room, page, p.Err()
}
