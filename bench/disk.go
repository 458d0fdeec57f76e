package bench

import (
	"os"
	"time"

	bolt "go.etcd.io/bbolt"
)

// read fills d from the stopped server's bbolt file: its size (bbolt grows
// the file in steps, so the size per handler is an upper bound), the part
// bbolt has handed out (the high-water mark), the free pages, and per
// top-level bucket the keys and the bytes of its pages, allocated and used.
// The file is opened read-only, which needs the server to have stopped.
func (d *diskResult) read(path string, n int) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	d.FileBytes = fi.Size()
	d.PerReleased = d.FileBytes / int64(n)
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, PreLoadFreelist: true, Timeout: 5 * time.Second})
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	err = db.View(func(tx *bolt.Tx) error {
		d.PageSize = db.Info().PageSize
		d.HighWaterBytes = tx.Size()
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			s := b.Stats()
			d.Buckets = append(d.Buckets, bucketDisk{
				Name:       string(name),
				Keys:       s.KeyN,
				AllocBytes: int64(s.BranchAlloc + s.LeafAlloc),
				InuseBytes: int64(s.BranchInuse + s.LeafInuse),
			})
			return nil
		})
	})
	if err != nil {
		return err
	}
	st := db.Stats()
	d.FreeBytes = int64(st.FreePageN) * int64(d.PageSize)
	return nil
}
