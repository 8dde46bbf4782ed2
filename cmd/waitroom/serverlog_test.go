package main

import (
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// A failed TLS handshake is a debug line, not a warning per scanner; the
// server's other messages stay warnings.
func TestServerLog_HandshakeErrorsAtDebug(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	l := stdLog(zap.New(core))
	l.Printf("http: TLS handshake error from 198.51.100.7:51234: tls: first record does not look like a TLS handshake")
	l.Printf("http: Accept error: accept tcp: too many open files; retrying in 5ms")
	got := logs.All()
	if len(got) != 2 || got[0].Level != zapcore.DebugLevel || got[1].Level != zapcore.WarnLevel {
		t.Fatalf("levels: %+v", got)
	}
	if got[1].Message != "http: Accept error: accept tcp: too many open files; retrying in 5ms" {
		t.Fatalf("message: %q", got[1].Message)
	}
}
