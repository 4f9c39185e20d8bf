package rdb

import "strconv"

// Type is an RDB value type: the byte before a key in a file, the first
// byte of a DUMP payload.
type Type uint8

// The value types of RDB versions up to 12.
const (
	TypeString          Type = 0
	TypeList            Type = 1
	TypeSet             Type = 2
	TypeZSet            Type = 3 // members and text scores
	TypeHash            Type = 4
	TypeZSet2           Type = 5 // members and binary scores
	TypeModulePreGA     Type = 6
	TypeModule2         Type = 7
	TypeHashZipmap      Type = 9
	TypeListZiplist     Type = 10
	TypeSetIntset       Type = 11
	TypeZSetZiplist     Type = 12
	TypeHashZiplist     Type = 13
	TypeListQuicklist   Type = 14
	TypeStreamListpacks Type = 15
	TypeHashListpack    Type = 16
	TypeZSetListpack    Type = 17
	TypeListQuicklist2  Type = 18
	TypeStreamListpack2 Type = 19
	TypeSetListpack     Type = 20
	TypeStreamListpack3 Type = 21
)

// Valid reports whether t is a value type a Redis of RDB version 11 knows.
func (t Type) Valid() bool { return t <= 7 || (t >= 9 && t <= 21) }

// IsZSet reports whether t encodes a sorted set.
func (t Type) IsZSet() bool {
	return t == TypeZSet || t == TypeZSet2 || t == TypeZSetZiplist || t == TypeZSetListpack
}

// Kind is the Redis data type t encodes, as TYPE names it: "string",
// "list", "set", "zset", "hash", "stream" or "module".
func (t Type) Kind() string {
	switch t {
	case TypeString:
		return "string"
	case TypeList, TypeListZiplist, TypeListQuicklist, TypeListQuicklist2:
		return "list"
	case TypeSet, TypeSetIntset, TypeSetListpack:
		return "set"
	case TypeZSet, TypeZSet2, TypeZSetZiplist, TypeZSetListpack:
		return "zset"
	case TypeHash, TypeHashZipmap, TypeHashZiplist, TypeHashListpack:
		return "hash"
	case TypeStreamListpacks, TypeStreamListpack2, TypeStreamListpack3:
		return "stream"
	case TypeModulePreGA, TypeModule2:
		return "module"
	}
	return "type" + strconv.Itoa(int(t))
}

var typeNames = map[Type]string{
	TypeString: "string", TypeList: "list", TypeSet: "set", TypeZSet: "zset", TypeHash: "hash",
	TypeZSet2: "zset2", TypeModulePreGA: "module-pre-ga", TypeModule2: "module2",
	TypeHashZipmap: "hash-zipmap", TypeListZiplist: "list-ziplist", TypeSetIntset: "set-intset",
	TypeZSetZiplist: "zset-ziplist", TypeHashZiplist: "hash-ziplist", TypeListQuicklist: "list-quicklist",
	TypeStreamListpacks: "stream-listpacks", TypeHashListpack: "hash-listpack",
	TypeZSetListpack: "zset-listpack", TypeListQuicklist2: "list-quicklist2",
	TypeStreamListpack2: "stream-listpacks2", TypeSetListpack: "set-listpack",
	TypeStreamListpack3: "stream-listpacks3",
}

// String names the type and its encoding.
func (t Type) String() string {
	if n, ok := typeNames[t]; ok {
		return n
	}
	return "type" + strconv.Itoa(int(t))
}

// File opcodes: the byte before a key, when it is not a value type.
const (
	opFunction2     = 245
	opFunctionPreGA = 246
	opModuleAux     = 247
	opIdle          = 248
	opFreq          = 249
	opAux           = 250
	opResizeDB      = 251
	opExpireMS      = 252
	opExpire        = 253
	opSelectDB      = 254
	opEOF           = 255
)

// Module value opcodes.
const (
	modEOF    = 0
	modSInt   = 1
	modUInt   = 2
	modFloat  = 3
	modDouble = 4
	modString = 5
)
