package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"golang.org/x/crypto/acme"
	"golang.org/x/crypto/acme/autocert"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/conf"
)

// TLSConfig is the tls section: the visitor listener serves HTTPS (HTTP/2
// by ALPN) with a certificate from files or from an ACME CA.
type TLSConfig struct {
	// CertFile and KeyFile are a PEM certificate chain and its key. They
	// are read again when they change (cert-manager renews in place), for
	// new connections; open ones keep theirs. Default "": no TLS.
	CertFile string `mapstructure:"cert_file" yaml:"cert_file" json:"cert_file"`
	KeyFile  string `mapstructure:"key_file" yaml:"key_file" json:"key_file"`
	// MinVersion is "1.2" (default) or "1.3".
	MinVersion string `mapstructure:"min_version" yaml:"min_version" json:"min_version"`
	// RedirectListen, such as ":80", answers plain HTTP with a 308 to the
	// same URL over HTTPS (and ACME's HTTP challenges). Default "": none.
	RedirectListen string `mapstructure:"redirect_listen" yaml:"redirect_listen" json:"redirect_listen"`
	// ACME obtains and renews certificates instead of CertFile and KeyFile.
	ACME ACMEConfig `mapstructure:"acme" yaml:"acme" json:"acme"`
}

// ACMEConfig obtains certificates from an ACME CA (Let's Encrypt by
// default). With the Redis store, certificates and the account key are
// kept in Redis, so one instance asks the CA for all of them.
type ACMEConfig struct {
	// Domains are the host names to obtain certificates for; a handshake
	// for any other name is refused. Default none: ACME off.
	Domains []string `mapstructure:"domains" yaml:"domains" json:"domains"`
	// Email is the account's contact for expiry notices. Default "".
	Email string `mapstructure:"email" yaml:"email" json:"email"`
	// DirectoryURL is the CA's directory. Default Let's Encrypt's.
	DirectoryURL string `mapstructure:"directory_url" yaml:"directory_url" json:"directory_url"`
	// CAFile is a PEM bundle trusted for the CA's own HTTPS, for a private
	// CA. Default "": the system's roots.
	CAFile string `mapstructure:"ca_file" yaml:"ca_file" json:"ca_file"`
}

// tlsSettings is the tls section, built.
type tlsSettings struct {
	on             bool
	certFile       string
	keyFile        string
	minVersion     uint16
	redirectListen string
	acme           *ACMEConfig
	roots          *x509.CertPool // for the CA's HTTPS; nil: the system's
}

func (c TLSConfig) build(p *conf.Problems) tlsSettings {
	s := tlsSettings{certFile: c.CertFile, keyFile: c.KeyFile, redirectListen: c.RedirectListen}
	switch c.MinVersion {
	case "1.2":
		s.minVersion = tls.VersionTLS12
	case "1.3":
		s.minVersion = tls.VersionTLS13
	default:
		p.Add("tls.min_version", `must be "1.2" or "1.3", got %q`, c.MinVersion)
	}
	files := c.CertFile != "" || c.KeyFile != ""
	switch {
	case files && (c.CertFile == "" || c.KeyFile == ""):
		p.Add("tls", "cert_file and key_file go together, got cert_file %q and key_file %q", c.CertFile, c.KeyFile)
	case files && len(c.ACME.Domains) > 0:
		p.Add("tls", "either cert_file and key_file or acme.domains, not both")
	case files:
		if _, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile); err != nil {
			p.Add("tls.cert_file", "cannot load the certificate and key: %v", err)
		}
	}
	if len(c.ACME.Domains) > 0 {
		for i, d := range c.ACME.Domains {
			if d == "" || strings.ContainsAny(d, "/: ") {
				p.Add(fmt.Sprintf("tls.acme.domains[%d]", i), "want a host name, got %q", d)
			}
		}
		a := c.ACME
		s.acme = &a
		if c.ACME.CAFile != "" {
			pem, err := os.ReadFile(c.ACME.CAFile)
			s.roots = x509.NewCertPool()
			if err != nil || !s.roots.AppendCertsFromPEM(pem) {
				p.Add("tls.acme.ca_file", "want a readable PEM bundle, got %q", c.ACME.CAFile)
			}
		}
	}
	s.on = files || s.acme != nil
	if c.RedirectListen != "" {
		if !s.on {
			p.Add("tls.redirect_listen", "needs TLS (cert_file and key_file, or acme.domains)")
		} else if _, _, err := net.SplitHostPort(c.RedirectListen); err != nil {
			p.Add("tls.redirect_listen", `want host:port such as ":80", got %q`, c.RedirectListen)
		}
	}
	return s
}

// certCacher is a store that keeps the ACME certificates for every instance
// (redisstore.Store); tlsConfig finds it with waitroom.As.
type certCacher interface {
	CertCache() autocert.Cache
}

// tlsConfig is the listener's TLS: a certificate from the files, read
// again when they change, or from the ACME manager, whose HTTP challenges
// the redirect listener answers (wrap puts them in front of it).
func (a *App) tlsConfig(s tlsSettings, log *zap.Logger) (cfg *tls.Config, wrap func(http.Handler) http.Handler, err error) {
	if s.acme != nil {
		m := &autocert.Manager{
			Prompt:     autocert.AcceptTOS,
			HostPolicy: autocert.HostWhitelist(s.acme.Domains...),
			Email:      s.acme.Email,
		}
		if c, ok := waitroom.As[certCacher](a.store); ok {
			m.Cache = c.CertCache()
		} else {
			log.Warn("tls.acme with the memory store: certificates are not kept across restarts; each start asks the CA again")
		}
		if s.acme.DirectoryURL != "" || s.roots != nil {
			m.Client = &acme.Client{DirectoryURL: s.acme.DirectoryURL}
			if s.roots != nil {
				m.Client.HTTPClient = &http.Client{Timeout: 30 * time.Second,
					Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: s.roots, MinVersion: tls.VersionTLS12}}}
			}
		}
		cfg := m.TLSConfig()
		cfg.MinVersion = s.minVersion
		return cfg, m.HTTPHandler, nil
	}
	r := &certReloader{certFile: s.certFile, keyFile: s.keyFile, log: log}
	if err := r.load(); err != nil {
		return nil, nil, err
	}
	same := func(h http.Handler) http.Handler { return h }
	return &tls.Config{MinVersion: s.minVersion, NextProtos: []string{"h2", "http/1.1"}, GetCertificate: r.get}, same, nil
}

// certReloader serves the certificate of two files, read again when either
// changes: a handshake looks at their modification times at most once a
// second. A file that fails to read keeps the previous certificate.
type certReloader struct {
	certFile, keyFile string
	log               *zap.Logger
	mu                sync.Mutex
	cert              *tls.Certificate
	stamp             string    // the files' modification times and sizes
	checked           time.Time // when the files were last looked at
}

func (r *certReloader) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if time.Since(r.checked) >= time.Second {
		r.checked = time.Now()
		if st := r.fileStamp(); st != r.stamp {
			if err := r.loadLocked(); err != nil {
				r.log.Error("the certificate files changed but do not load; the previous certificate stays", zap.Error(err))
			} else {
				r.log.Info("certificate reloaded", zap.String("cert_file", r.certFile))
			}
		}
	}
	return r.cert, nil
}

func (r *certReloader) load() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.checked = time.Now()
	return r.loadLocked()
}

func (r *certReloader) loadLocked() error {
	st := r.fileStamp()
	cert, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		r.stamp = st // do not retry a broken pair every second
		return fmt.Errorf("loading tls.cert_file and key_file: %w", err)
	}
	r.cert, r.stamp = &cert, st
	return nil
}

func (r *certReloader) fileStamp() string {
	var b strings.Builder
	for _, f := range []string{r.certFile, r.keyFile} {
		if fi, err := os.Stat(f); err == nil {
			fmt.Fprintf(&b, "%d/%d;", fi.ModTime().UnixNano(), fi.Size())
		}
	}
	return b.String()
}

// redirect answers plain HTTP with a 308 to the same URL over HTTPS on the
// visitor listener's port (left out when it is 443).
func redirect(listen string) http.Handler {
	_, port, _ := net.SplitHostPort(listen)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if host == "" || strings.ContainsAny(host, "/\\@") {
			http.Error(w, "bad Host", http.StatusBadRequest)
			return
		}
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		if port != "" && port != "443" {
			host += ":" + port
		}
		http.Redirect(w, r, "https://"+host+r.URL.RequestURI(), http.StatusPermanentRedirect)
	})
}

// listenTLS puts TLS on the visitor listener when the configuration asks
// for it, and opens the redirect listener; without TLS it warns when the
// cookie cannot survive plain HTTP.
func (a *App) listenTLS(cfg *Settings, log *zap.Logger) error {
	if !cfg.tls.on {
		if cfg.cookie.Secure && len(cfg.trusted) == 0 {
			log.Warn("cookie.secure is true but this listener is plain HTTP and no trusted proxy terminates TLS in front of it: " +
				"browsers will not send the ticket cookie back over HTTP, so every request is a new visitor. " +
				"Set tls.cert_file/key_file or tls.acme, put a TLS terminator in server.trusted_proxies, or set cookie.secure: false for local testing")
		}
		return nil
	}
	tcfg, wrap, err := a.tlsConfig(cfg.tls, log.Named("tls"))
	if err != nil {
		return err
	}
	a.listener = tls.NewListener(a.listener, tcfg)
	if cfg.tls.redirectListen == "" {
		return nil
	}
	if a.redirectLn, err = net.Listen("tcp", cfg.tls.redirectListen); err != nil {
		return fmt.Errorf("listening on tls.redirect_listen %s: %w", cfg.tls.redirectListen, err)
	}
	a.redirect = &http.Server{
		Handler:           wrap(redirect(a.listener.Addr().String())), // the port bound, for ":0" too
		ReadHeaderTimeout: cfg.server.readHeader, IdleTimeout: cfg.server.idle,
		ErrorLog: stdLog(log.Named("redirect")),
	}
	return nil
}

// RedirectAddr is the redirect listener's address; nil when it is off.
func (a *App) RedirectAddr() net.Addr {
	if a.redirectLn == nil {
		return nil
	}
	return a.redirectLn.Addr()
}
