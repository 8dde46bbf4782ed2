package web

import (
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"sync"
)

// DashboardAPI is where the dashboard's script finds the admin JSON API:
// GET {DashboardAPI}/rooms, GET {DashboardAPI}/rooms/{room}/history,
// PATCH {DashboardAPI}/rooms/{room}, DELETE {DashboardAPI}/rooms/{room}/overrides
// and POST {DashboardAPI}/rooms/{room}/admit, each with the bearer token.
const DashboardAPI = "/admin/api"

// The dashboard's refresh periods, in milliseconds, handed to its script.
const (
	dashboardRoomsEvery   = 3000  // the room cards
	dashboardHistoryEvery = 10000 // the 15-minute charts
)

// dashboardAssets are the dashboard's inline style and script and the
// Content-Security-Policy that allows exactly them.
type dashboardAssets struct {
	css template.CSS
	js  template.JS
	csp string
}

// loadDashboard reads and hashes the embedded assets once per process; they
// cannot change while it runs.
var loadDashboard = sync.OnceValues(func() (dashboardAssets, error) {
	css, err := fs.ReadFile(files, "static/dashboard.css")
	if err != nil {
		return dashboardAssets{}, fmt.Errorf("reading dashboard stylesheet: %w", err)
	}
	js, err := fs.ReadFile(files, "static/dashboard.js")
	if err != nil {
		return dashboardAssets{}, fmt.Errorf("reading dashboard script: %w", err)
	}
	return dashboardAssets{
		css: template.CSS(css),
		js:  template.JS(js),
		csp: dashboardCSP(hashSource(js), hashSource(css)),
	}, nil
})

// dashboardCSP allows the page's own script and style, calls to its own
// origin and nothing else. form-action 'none' keeps the token form from ever
// being submitted as a navigation (the token would end up in a URL), and
// frame-ancestors 'none' keeps the pause button out of anyone's frame.
func dashboardCSP(scriptSrc, styleSrc string) string {
	return "default-src 'none'; script-src " + scriptSrc + "; style-src " + styleSrc +
		"; img-src data:; connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'"
}

// dashboardView is what templates/dashboard.html renders.
type dashboardView struct {
	Lang         string            // "en" or "ko": dashboardLang
	T            map[string]string // the page's words in Lang
	Text         template.JS       // the same words as JSON, for the script
	CSS          template.CSS
	JS           template.JS
	API          string
	RoomsEvery   int
	HistoryEvery int
}

// Dashboard serves the operator's live dashboard, meant for GET /admin/ on
// the admin listener, in Korean or English: the language the operator
// picked on it (DashboardLangCookie), else the browser's Accept-Language. The page itself holds no data and needs no token: its
// script asks for the admin token once, keeps it in the tab's sessionStorage
// and reads and steers the rooms through the admin API at DashboardAPI.
//
// The answer is never cached (Cache-Control: no-store) and carries a strict
// Content-Security-Policy: the inline style and script are allowed by their
// SHA-256 hashes, connections go to the page's own origin only, and nothing
// is loaded from anywhere else. Methods other than GET and HEAD get 405.
func (p *Pages) Dashboard(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		secure(w.Header(), cspJSON)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	a, err := loadDashboard()
	if err != nil {
		// The assets are embedded at build time, so this is a guard for a
		// broken build rather than a path.
		secure(w.Header(), cspJSON)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Add("Vary", "Accept-Language, Cookie")
	lang := dashboardLang(r)
	p.html(w, r, http.StatusOK, a.csp, "dashboard.html", dashboardView{
		Lang:         lang,
		T:            dashboardText[lang],
		Text:         dashboardJSON[lang],
		CSS:          a.css,
		JS:           a.js,
		API:          DashboardAPI,
		RoomsEvery:   dashboardRoomsEvery,
		HistoryEvery: dashboardHistoryEvery,
	})
}
