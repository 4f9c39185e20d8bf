package acl

import (
	"crypto/rand"
	"encoding/hex"
)

// GenPassMaxBits is the largest password ACL GENPASS makes.
const GenPassMaxBits = 4096

// GenPass returns a random password of bits bits (1 to GenPassMaxBits),
// as lowercase hex digits: one per four bits, rounded up.
func GenPass(bits int) string {
	chars := (bits + 3) / 4
	buf := make([]byte, (chars+1)/2)
	if _, err := rand.Read(buf); err != nil {
		panic("acl: no randomness: " + err.Error())
	}
	return hex.EncodeToString(buf)[:chars]
}
