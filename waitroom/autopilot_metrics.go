package waitroom

// The autopilot's series (waitroom_autopilot_*{room}) follow the other
// room series: a room filled in from a template is not a series of its
// own, so their number does not grow with the events. A template's
// series are published by sweepTemplates beside its summed queue gauges:
// the limit is the sum of its rooms' limits in effect (to set beside
// waitroom_active_sessions, the sum of their sessions inside), the latency
// and the error share the worst of its rooms', frozen 1 while any of them
// is; all 0 with no room in use.

// publishAutopilot publishes a room's autopilot, unless the room is
// filled in from a template (its template's sum is sweepTemplates').
func (rs *Rooms) publishAutopilot(lr *liveRoom, v *AutopilotView) {
	if lr.filled() {
		return
	}
	if ob, ok := rs.obs.(AutopilotObserver); ok {
		ob.Autopilot(lr.label(), v)
	}
}

// add sums a template's room into the template's autopilot series.
func (s *AutopilotView) add(v *AutopilotView) {
	s.Limit += v.Limit
	s.Latency = max(s.Latency, v.Latency)
	s.AutopilotState.ErrorsPPM = max(s.AutopilotState.ErrorsPPM, v.AutopilotState.ErrorsPPM)
	s.Frozen = s.Frozen || v.Frozen
}
