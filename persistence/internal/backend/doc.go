// Package backend is what every persistence backend does the same way,
// whatever it stores in: the checks and preparation of a call before it
// reaches the storage (a workflow put, a publish), the conditions of a
// workflow put or delete, the revision a written handler gets, and the
// collection of a listing that leaves out values it cannot decode. A
// backend keeps only what is its own: how it reads, locks and writes.
//
// Errors name the operation ("put workflow", "list handlers") but not the
// backend: the backend prefixes its name ("bolt: ", "postgres: ").
package backend
