//go:build wasip1

// Added to github.com/Masterminds/sprig/v3 by hack/lib/build-helm.sh (go build -overlay), for
// the wasm renderer only: sprig's genCA, genSelfSignedCert, genSignedCert and genPrivateKey
// generate RSA keys, and Go's prime search without assembly under WebAssembly took ~450 ms per
// 2048-bit key (a chart with a generated CA and certificate rendered 3.4x slower than
// `helm template`). The build rewrites those calls to mooringRSAKey, which asks the host (Node's
// OpenSSL) for the key. The host is given only a bit count and returns only the key; signing the
// certificate stays in the guest, so the template output is built exactly as sprig builds it.
package sprig

import (
	"crypto/rsa"
	"crypto/x509"
	"io"
	"runtime"
	"unsafe"
)

// hostRSAKey asks the host for an RSA private key of `bits` bits; it returns the length of its
// PKCS #1 DER encoding, waiting at mooring.rsa_key_answer, or 0 when the host declines the size.
//
//go:wasmimport mooring rsa_key
func hostRSAKey(bits int32) int32

// hostRSAKeyAnswer copies the pending key to buf, which holds its length.
//
//go:wasmimport mooring rsa_key_answer
func hostRSAKeyAnswer(buf unsafe.Pointer)

// mooringRSAKey has rsa.GenerateKey's signature, so the rewritten call sites read the same.
func mooringRSAKey(random io.Reader, bits int) (*rsa.PrivateKey, error) {
	n := hostRSAKey(int32(bits))
	if n <= 0 {
		return rsa.GenerateKey(random, bits)
	}
	der := make([]byte, n)
	hostRSAKeyAnswer(unsafe.Pointer(unsafe.SliceData(der)))
	runtime.KeepAlive(der)
	return x509.ParsePKCS1PrivateKey(der)
}
