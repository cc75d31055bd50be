package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// The files of `conform serve --tls` in its TLS directory.
const (
	tlsCAFile       = "ca.pem"     // the local CA's certificate: the file users trust
	tlsCAKeyFile    = "ca-key.pem" // its private key, kept so that the CA outlives a restart
	tlsCertFile     = "cert.pem"   // the server's certificate, signed by the CA, made on each start
	tlsKeyFile      = "key.pem"    // its private key
	tlsCAValidity   = 10 * 365 * 24 * time.Hour
	tlsCertValidity = 90 * 24 * time.Hour
)

// servedTLS is what `conform serve --tls` serves with, and what it tells the user.
type servedTLS struct {
	config *tls.Config
	// caFile is the CA certificate to trust, for a generated certificate; empty when the
	// user gave --cert and --key.
	caFile   string
	certFile string
	// notes are the lines to tell the user about the TLS directory: a key whose mode was
	// made private, a new CA that replaces one clients may trust.
	notes []string
}

// loadServeTLS returns the TLS configuration of `conform serve`: the certificate and key
// the user gave, or else a certificate generated in dir for the loopback names
// (localhost, *.localhost, *.table.localhost, 127.0.0.1, ::1), signed by a local CA kept
// in dir. The CA is limited by name constraints to those names, so that trusting it
// trusts nothing else.
func loadServeTLS(dir, certFile, keyFile string, now time.Time) (servedTLS, error) {
	if certFile != "" || keyFile != "" {
		if certFile == "" || keyFile == "" {
			return servedTLS{}, errors.New("--cert and --key go together")
		}
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return servedTLS{}, fmt.Errorf("--cert/--key: %w", err)
		}
		return servedTLS{config: serveTLSConfig(pair), certFile: certFile}, nil
	}
	if dir == "" {
		base, err := os.UserConfigDir()
		if err != nil {
			return servedTLS{}, fmt.Errorf("--tls-dir is needed: %w", err)
		}
		dir = filepath.Join(base, "conform", "tls")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return servedTLS{}, fmt.Errorf("--tls-dir: %w", err)
	}
	ca, caKey, notes, err := loadOrMakeCA(dir, now)
	if err != nil {
		return servedTLS{}, err
	}
	pair, err := makeServerCertificate(dir, ca, caKey, now)
	if err != nil {
		return servedTLS{}, err
	}
	return servedTLS{config: serveTLSConfig(pair), caFile: filepath.Join(dir, tlsCAFile), certFile: filepath.Join(dir, tlsCertFile), notes: notes}, nil
}

func serveTLSConfig(pair tls.Certificate) *tls.Config {
	// HTTP/1.1 only, as the Table service speaks it.
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
}

// loopbackDNS and loopbackIPs are the names the generated certificate is for, and all the
// CA may sign.
var (
	loopbackDNS = []string{"localhost", "*.localhost", "*.table.localhost"}
	loopbackIPs = []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}
)

// loadOrMakeCA reads the CA of dir, or makes one when dir holds no CA certificate or
// its certificate expires within a day. A certificate without its key is refused. The notes
// tell the user what changed: a CA key readable beyond its owner is made private (its mode
// set to 0600), and a new CA that replaces an old one (a key left without its certificate,
// an expiring certificate) is named, since clients that trusted the old ca.pem no longer
// trust the server.
func loadOrMakeCA(dir string, now time.Time) (*x509.Certificate, *ecdsa.PrivateKey, []string, error) {
	var notes []string
	keyPath := filepath.Join(dir, tlsCAKeyFile)
	certPEM, certErr := os.ReadFile(filepath.Join(dir, tlsCAFile))
	keyPEM, keyErr := os.ReadFile(keyPath)
	if certErr == nil && keyErr == nil {
		cert, key, err := parsePair(certPEM, keyPEM)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("the CA in %s: %w (remove %s and %s to make a new one)", dir, err, tlsCAFile, tlsCAKeyFile)
		}
		if now.Before(cert.NotAfter.Add(-24 * time.Hour)) {
			note, err := makeKeyPrivate(keyPath)
			if err != nil {
				return nil, nil, nil, err
			}
			if note != "" {
				notes = append(notes, note)
			}
			return cert, key, notes, nil
		}
		notes = append(notes, fmt.Sprintf("TLS: the local CA %s expired on %s (or expires within a day): a new CA replaces it; clients that trusted the old one must trust the new %s",
			filepath.Join(dir, tlsCAFile), cert.NotAfter.UTC().Format(time.RFC3339), tlsCAFile))
	} else if certErr != nil && !errors.Is(certErr, fs.ErrNotExist) {
		return nil, nil, nil, certErr
	} else if certErr == nil {
		// A CA certificate users may already trust, without the key that signs with it:
		// making a new CA would replace the file they trust without a word.
		if !errors.Is(keyErr, fs.ErrNotExist) {
			return nil, nil, nil, keyErr
		}
		return nil, nil, nil, fmt.Errorf("%s is in %s without its key %s: restore the key, or remove %s to make a new CA (clients then trust the new %s)",
			tlsCAFile, dir, tlsCAKeyFile, tlsCAFile, tlsCAFile)
	} else if keyErr == nil || !errors.Is(keyErr, fs.ErrNotExist) {
		// The key of a CA whose certificate is gone: clients may trust that certificate.
		notes = append(notes, fmt.Sprintf("TLS: %s is in %s without its certificate %s: a new CA replaces the old one; clients that trusted the old %s must trust the new %s",
			tlsCAKeyFile, dir, tlsCAFile, tlsCAFile, filepath.Join(dir, tlsCAFile)))
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:                serialNumber(),
		Subject:                     pkix.Name{CommonName: "conform serve local CA", Organization: []string{"conform"}},
		NotBefore:                   now.Add(-time.Hour),
		NotAfter:                    now.Add(tlsCAValidity),
		IsCA:                        true,
		BasicConstraintsValid:       true,
		MaxPathLenZero:              true,
		KeyUsage:                    x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		PermittedDNSDomainsCritical: true,
		PermittedDNSDomains:         []string{"localhost"},
		PermittedIPRanges: []*net.IPNet{
			{IP: net.ParseIP("127.0.0.0").To4(), Mask: net.CIDRMask(8, 32)},
			{IP: net.ParseIP("::1"), Mask: net.CIDRMask(128, 128)},
		},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := writePair(dir, tlsCAFile, tlsCAKeyFile, der, key); err != nil {
		return nil, nil, nil, err
	}
	return cert, key, notes, nil
}

// makeServerCertificate signs a new certificate for the loopback names with the CA and
// writes it, with its key, into dir.
func makeServerCertificate(dir string, ca *x509.Certificate, caKey *ecdsa.PrivateKey, now time.Time) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serialNumber(),
		Subject:      pkix.Name{CommonName: "localhost", Organization: []string{"conform serve"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     minTime(now.Add(tlsCertValidity), ca.NotAfter),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     loopbackDNS,
		IPAddresses:  loopbackIPs,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, err
	}
	if err := writePair(dir, tlsCertFile, tlsKeyFile, der, key); err != nil {
		return tls.Certificate{}, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}

// makeKeyPrivate sets the mode of the private key at path to 0600 when others may read it
// (a copied directory, an older version, a hand-made key) and says so; it refuses a key it
// cannot make private.
func makeKeyPrivate(path string) (string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	mode := info.Mode().Perm()
	if mode&0o077 == 0 {
		return "", nil
	}
	if err := os.Chmod(path, 0o600); err != nil {
		return "", fmt.Errorf("%s is readable beyond its owner (mode %#o) and its mode cannot be set to 0600: %w", path, mode, err)
	}
	return fmt.Sprintf("TLS: %s was readable beyond its owner (mode %#o); its mode is now 0600 (whoever read it can sign certificates your clients trust for the loopback names: remove %s and %s to make a new CA)",
		path, mode, tlsCAFile, tlsCAKeyFile), nil
}

func writePair(dir, certName, keyName string, der []byte, key *ecdsa.PrivateKey) error {
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	if err := writeFileAs(filepath.Join(dir, keyName), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return err
	}
	return writeFileAs(filepath.Join(dir, certName), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}

// writeFileAs replaces the file at path with data and mode perm, whatever the mode of a
// file already there (os.WriteFile keeps it): the data goes to a new file of that mode,
// renamed into place.
func writeFileAs(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // once renamed, the name is gone
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func parsePair(certPEM, keyPEM []byte) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, nil, errors.New("not PEM")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, nil, err
	}
	k, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		return nil, nil, err
	}
	key, ok := k.(*ecdsa.PrivateKey)
	if !ok || !key.PublicKey.Equal(cert.PublicKey) {
		return nil, nil, errors.New("the key does not belong to the certificate")
	}
	return cert, key, nil
}

func serialNumber() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
