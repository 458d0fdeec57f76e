// Package attrs is the domain layer of search attributes: typed values a
// workflow declares (its Schema), that a handler is given at start and
// that its steps update (a Set), stored with the handler's metadata
// (Encode, Decode) and indexed by the stores (AppendKey). It is pure: no
// I/O, no clock, no state; the engine, the stores, the server and the
// clients call it.
//
// # Types and values
//
// An attribute is a string, keyword_list, int, double, bool or time (see
// Type). There is one string type, matched exactly and ordered by bytes:
// wfd has no full-text search, so the Text/Keyword split of other systems
// would name one behaviour twice. A keyword_list holds up to MaxListItems
// strings and answers contains. Ints are within ±(2^53-1), so that every
// JSON client reads them exactly; doubles are finite; times are RFC 3339
// strings on the wire, kept in UTC to the microsecond (PostgreSQL's
// precision, truncated); strings are valid UTF-8 without NUL, at most
// MaxStringBytes.
//
// Schema.Convert checks what the API receives (a structpb.Struct such as
// {"customer": "acme", "amount": 120}) and returns a typed Set, or an
// *AttributeError such as `attribute "amount": want int, got string "x"`;
// nothing is converted unless everything is. A null deletes: Merge(old,
// update) applies a step's update. Encode and Decode give a Set's stored
// form: binary, versioned, canonical.
package attrs
