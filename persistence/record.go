package persistence

// Record is one record of a handler's stream. The store keeps records
// durable and in order so that a client can resume a stream from the last
// sequence number it saw; what a record means is up to the engine.
type Record struct {
	// Seq is the record's sequence number, unique and increasing within
	// its handler (it need not be dense).
	Seq  uint64
	Data []byte
}
