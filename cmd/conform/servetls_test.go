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
	ca, caKey, _, err := loadOrMakeCA(dir, now)
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

// TestServeTLSMakesALooseCAKeyPrivate: a kept CA key that others may read (mode 0644) is
// not used silently: its mode is set to 0600 and a note says so; the CA stays the same.
func TestServeTLSMakesALooseCAKeyPrivate(t *testing.T) {
	dir := t.TempDir()
	first, err := loadServeTLS(dir, "", "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(first.notes) != 0 {
		t.Errorf("a first start: notes %q", first.notes)
	}
	trusted, _ := os.ReadFile(first.caFile)
	keyPath := filepath.Join(dir, tlsCAKeyFile)
	if err := os.Chmod(keyPath, 0o644); err != nil {
		t.Fatal(err)
	}
	second, err := loadServeTLS(dir, "", "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(keyPath); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("the CA key's mode after a start: %v, %v; want 0600", info.Mode().Perm(), err)
	}
	if len(second.notes) != 1 || !strings.Contains(second.notes[0], keyPath) || !strings.Contains(second.notes[0], "0644") || !strings.Contains(second.notes[0], "0600") {
		t.Errorf("notes %q: want one line naming %s, its old mode and 0600", second.notes, keyPath)
	}
	if now, _ := os.ReadFile(second.caFile); string(now) != string(trusted) {
		t.Error("the CA was replaced")
	}
}

// TestServeTLSSaysWhenANewCAReplacesTheOld: a CA key left without its certificate (ca.pem
// deleted) and an expiring CA are replaced by a new CA, and a note says that clients must
// trust the new ca.pem; a first start says nothing of the kind.
func TestServeTLSSaysWhenANewCAReplacesTheOld(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	first, err := loadServeTLS(dir, "", "", now)
	if err != nil {
		t.Fatal(err)
	}
	old, _ := os.ReadFile(first.caFile)
	if err := os.Remove(first.caFile); err != nil {
		t.Fatal(err)
	}
	second, err := loadServeTLS(dir, "", "", now)
	if err != nil {
		t.Fatal(err)
	}
	made, _ := os.ReadFile(second.caFile)
	if string(made) == string(old) || len(made) == 0 {
		t.Fatal("no new CA was made")
	}
	if len(second.notes) != 1 || !strings.Contains(second.notes[0], "replaces") || !strings.Contains(second.notes[0], second.caFile) {
		t.Errorf("a deleted ca.pem: notes %q, want one line saying a new CA replaces the old and naming %s", second.notes, second.caFile)
	}
	// Ten years on, the CA expires: the new one is named too.
	later, err := loadServeTLS(dir, "", "", now.Add(tlsCAValidity))
	if err != nil {
		t.Fatal(err)
	}
	if len(later.notes) != 1 || !strings.Contains(later.notes[0], "replaces") {
		t.Errorf("an expiring CA: notes %q, want one line saying a new CA replaces it", later.notes)
	}
}
