package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeTLSCertificate: the generated certificate verifies for the loopback names
// against the CA file, the CA is kept across starts, it cannot vouch for other names, and
// a certificate given with --cert/--key is served as it is.
func TestServeTLSCertificate(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	first, err := loadServeTLS(dir, "", "", now)
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(first.caFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	leaf := first.config.Certificates[0].Leaf
	for _, name := range []string{"localhost", "127.0.0.1", "::1", "devstoreaccount1.table.localhost"} {
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: roots}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "devstoreaccount1.table.core.windows.net", Roots: roots}); err == nil {
		t.Error("the certificate verifies for a production name")
	}
	if info, err := os.Stat(filepath.Join(dir, tlsCAKeyFile)); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("the CA key's mode: %v, %v", info, err)
	}

	second, err := loadServeTLS(dir, "", "", now)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(second.caFile)
	if string(again) != string(caPEM) {
		t.Error("a second start made a new CA: users would have to trust it again")
	}

	// The CA's name constraints: even its own key cannot vouch for another name.
	ca, caKey, err := loadOrMakeCA(dir, now)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{SerialNumber: serialNumber(), Subject: pkix.Name{CommonName: "x"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), DNSNames: []string{"example.com"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := x509.ParseCertificate(der)
	if _, err := other.Verify(x509.VerifyOptions{DNSName: "example.com", Roots: roots}); err == nil {
		t.Error("the CA vouches for example.com")
	}

	given, err := loadServeTLS("", first.certFile, filepath.Join(dir, tlsKeyFile), now)
	if err != nil || given.caFile != "" || len(given.config.Certificates) != 1 {
		t.Errorf("--cert/--key: %+v, %v", given, err)
	}
	if _, err := loadServeTLS("", first.certFile, "", now); err == nil {
		t.Error("--cert without --key was accepted")
	}
}

// TestServeTLSKeysStayPrivate: a private key serve writes is readable by its owner only,
// even where a file of that name was left with looser permissions (a copied directory, an
// older version).
func TestServeTLSKeysStayPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{tlsKeyFile, tlsCAKeyFile} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("stale"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Without ca.pem a new CA is made: both keys are written over the stale files.
	if _, err := loadServeTLS(dir, "", "", time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{tlsKeyFile, tlsCAKeyFile} {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != 0o600 {
			t.Errorf("%s is written with mode %v, readable beyond its owner", name, info.Mode().Perm())
		}
	}
}

// TestServeTLSRefusesACAWithoutItsKey: a CA certificate whose key is gone is refused with
// the way out, never replaced silently by a new CA that clients do not trust.
func TestServeTLSRefusesACAWithoutItsKey(t *testing.T) {
	dir := t.TempDir()
	first, err := loadServeTLS(dir, "", "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	trusted, _ := os.ReadFile(first.caFile)
	if err := os.Remove(filepath.Join(dir, tlsCAKeyFile)); err != nil {
		t.Fatal(err)
	}
	_, err = loadServeTLS(dir, "", "", time.Now())
	if err == nil || !strings.Contains(err.Error(), tlsCAKeyFile) || !strings.Contains(err.Error(), "remove "+tlsCAFile) {
		t.Fatalf("a CA without its key: %v, want a refusal naming %s and the way out", err, tlsCAKeyFile)
	}
	if now, _ := os.ReadFile(first.caFile); string(now) != string(trusted) {
		t.Error("the trusted CA file was replaced")
	}
}
