// Package attrs is the domain layer of search attributes: typed values a
// workflow declares (its Schema), that a handler is given at start and
// that its steps update (a Set), stored with the handler's metadata
// (Encode, Decode), indexed by the stores (AppendKey, Plan), and filtered
// and sorted in ListHandlers with a small query language (Parse, Check,
// Match, Order). It is pure: no I/O, no clock, no state; the engine, the stores,
// the server and the clients call it.
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
//
// # Queries
//
// A query is a condition, then optionally an order:
//
//	customer = "acme" and amount > 100 and status = running
//	tags contains "urgent" and not (region in ("eu", "uk") or vip = true)
//	due < "2025-07-01T00:00:00Z" and note exists order by due
//	workflow = "expense" order by amount desc
//	order by created_at
//
// Its grammar, in EBNF (keywords are case-insensitive; names are not):
//
//	query       = [ condition ] [ "order" "by" name [ "asc" | "desc" ] ] .
//	condition   = conjunction { "or" conjunction } .
//	conjunction = unary { "and" unary } .
//	unary       = "not" unary | "(" condition ")" | predicate .
//	predicate   = name operator value
//	            | name [ "not" ] "in" "(" value { "," value } ")"
//	            | name [ "not" ] "contains" value
//	            | name [ "not" ] "exists" .
//	operator    = "=" | "!=" | "<" | "<=" | ">" | ">=" .
//	value       = string | number | "true" | "false" | word .
//	name        = letter { letter | digit | "_" } .    (ASCII letters; a word has this form too)
//	string      = `"` { character | escape } `"` .
//	escape      = `\"` | `\\` | `\/` | `\b` | `\f` | `\n` | `\r` | `\t` | `\u` hex hex hex hex .
//	number      = [ "-" ] digits [ "." digits ] [ ( "e" | "E" ) [ "+" | "-" ] digits ] .
//
// Precedence is not, then and, then or: not a = 1 and b = 2 or c = 3 is
// ((not a = 1) and b = 2) or c = 3. "name not in (…)" is "not name in
// (…)", and likewise for contains and exists. A number with a point or an
// exponent is a double, one without an int; strings use JSON's escapes
// and may not contain control characters unescaped, nor NUL at all. A
// word (a name without quotes) is a value only after status: status =
// running. Times are strings: created_at > "2025-01-31T09:00:00Z"
// compares as a time because created_at is one.
//
// Names are the workflow's attributes and the built-in fields: workflow
// (a string), status (running, completed, failed, cancelled; =, != and in
// only), created_at and updated_at (times). What applies to which type,
// and which fields can order a listing, is in Query.Check.
//
// Order by sorts by one field, ascending unless desc; handlers without the
// field come last either way; ties keep the store's order (newest first).
// Without order by, the store's order holds.
//
// Limits keep hostile input cheap: a query is at most MaxQueryBytes, nests
// parentheses and not at most MaxDepth deep, has at most MaxTerms
// conditions and MaxTerms values in an in list.
//
// Parse reports a malformed query as a *SyntaxError with the 1-based byte
// offset of the offending token ("position 17: expected a value after
// \">\""); Check reports a query that does not fit the schema (an unknown
// attribute, an operator the type lacks, a value of the wrong type) as a
// *TypeError with the offending term's position. Both wrap ErrInvalid, as
// do all errors about input; the server answers InvalidArgument. Query's
// String is canonical and parses back to an equal Query.
//
// A query is used in this order: Parse, Check against the schema of the
// workflow whose handlers are listed (which fixes each field's type),
// then Match, Order.Compare and Plan.
//
// # Meaning
//
// Match is the meaning of a query, in two-valued logic: a condition on a
// field the handler lacks is false, whatever its operator (=, !=, <, in,
// contains, exists), and not of a false condition is true. So
// customer != "acme" leaves out handlers without a customer, and
// not customer = "acme" keeps them. A value stored with another type than
// the schema's (the attribute's type changed in a later version of the
// workflow; a Set keeps each value's type) counts as missing, as it would
// in a typed index or column. A store that translates queries to
// SQL keeps this meaning by translating each comparison c as (c) IS TRUE
// (or coalesce(c, false)) before not, and, or apply, rather than letting
// SQL's three-valued NULLs through; it compares strings with COLLATE "C"
// (byte order, as Value.Compare) and sorts with NULLS LAST.
//
// # Indexes
//
// Plan tells a store which conditions an index on one field could
// answer: =, in, contains and ranges at the top level of the condition
// (alone or in the top-level and). A query with none, such as
// a = 1 or b = 2, gets a Reason the store can return rather than
// scanning every handler silently. AppendKey gives order-preserving keys
// for indexes kept in sorted key spaces (bbolt).
package attrs
