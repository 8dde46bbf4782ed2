package waitroom

// Log field names: a closed list, so that logs from every component can be
// queried the same way. Cookie, token and Authorization values are never
// logged under any name.
const (
	fieldRoom     = "room"
	fieldVisitor  = "visitor"
	fieldTicket   = "ticket"
	fieldPosition = "position"
	fieldDuration = "duration"
	fieldNetwork  = "network"
)
