// Package rdb reads and writes Redis's serialization format: the value
// encodings of RDB files, DUMP payloads (one value with a version and
// checksum footer), and whole RDB files, as far as a sorted-set database
// needs them.
//
// Sorted sets are decoded in every form a Redis of RDB version 11 or 12
// writes or reads: ZSET (members with scores as text), ZSET_2 (scores as
// binary doubles), ZSET_ZIPLIST and ZSET_LISTPACK (a ziplist or listpack
// blob of member, score pairs, members and scores stored as integers
// when they are ones). Decoding calls a MemberFunc per member rather than
// building a structure, so the caller stores members where it likes (a
// packed set, a batch of commands) and a file's largest set never has to
// be held twice.
//
// Every other type is skipped by its encoding without being built: strings
// and blob encodings (ziplists, listpacks, intsets, zipmaps) are read past,
// compressed ones without being expanded; lists, sets, hashes and
// quicklists item by item; streams through their listpacks, consumer
// groups, pending entries and consumers; module values through the type
// annotations they are saved with. A type that cannot be skipped (a module
// value of the pre-release format, a type newer than RDB 12) stops the
// reading with ErrUnsupported.
//
// Writing follows Redis 7.2's choices so that a payload Goblin makes is
// the one Redis would make for the same set: a listpack when the set has
// at most 128 members of at most 64 bytes (Redis's default
// zset-max-listpack-entries and -value), ordered by score then member
// bytes, integer members and scores stored as integers; otherwise ZSET_2
// from the highest member to the lowest. Strings are saved as Redis saves
// them: short canonical integers in an integer encoding, strings over 20
// bytes LZF-compressed when that saves space (lzf.go makes liblzf's
// choices), the rest as they are.
//
// Input is never trusted. A DUMP payload is decoded from memory, where
// every length is checked against the bytes left before it sizes
// anything; a file is read through a buffer in bounded chunks, so a lying
// length costs at most the bytes that follow it. An LZF string's claimed
// size is bounded by what its compressed bytes can expand to. Counts only
// bound loops that consume input. Nothing panics on malformed input (the
// fuzz targets check both parsers).
package rdb
