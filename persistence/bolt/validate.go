package bolt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// bbolt's file format (version 2), as far as validate reads it. bbolt
// keeps these in an internal package; the format is fixed by its version.
const (
	boltMagic          = 0xED0CDAED
	boltVersion        = 2
	pageHeaderSize     = 16 // id u64, flags u16, count u16, overflow u32
	metaSize           = 64 // magic, version, page size, flags, root (2×u64), freelist, pgid, txid, checksum
	metaChecksumOffset = 56
	branchPageFlag     = 0x01
	leafPageFlag       = 0x02
	freelistPageFlag   = 0x10
	noFreelist         = ^uint64(0)
	minPageSize        = 1024
	maxPageSize        = 16 << 20
)

// fileMeta is the meta page bbolt would use, and what validate learned.
type fileMeta struct {
	size     int64  // bytes in the file
	pageSize int64  // bytes per page
	pages    uint64 // the high-water mark: pages 0..pages-1 are in use or free
	root     uint64 // the root bucket's page
	freelist uint64 // the free list's first page, or noFreelist
	txid     uint64 // the last committed transaction
	meta     int    // which meta page (0 or 1) holds it
	free     int    // pages on the free list
	// invalidMeta says what is wrong with the other meta page, if
	// anything: bbolt copes with that by design (an interrupted commit
	// leaves it so), but Check reports it.
	invalidMeta string
}

// meta is one decoded meta page.
type meta struct {
	magic, version, pageSize             uint32
	root, freelist, pgid, txid, checksum uint64
}

func decodeMeta(page []byte) (meta, error) {
	if len(page) < pageHeaderSize+metaSize {
		return meta{}, errors.New("too short")
	}
	b := page[pageHeaderSize:]
	ne := binary.NativeEndian // bbolt writes its structs in the machine's byte order
	m := meta{
		magic: ne.Uint32(b), version: ne.Uint32(b[4:]), pageSize: ne.Uint32(b[8:]),
		root: ne.Uint64(b[16:]), freelist: ne.Uint64(b[32:]), pgid: ne.Uint64(b[40:]),
		txid: ne.Uint64(b[48:]), checksum: ne.Uint64(b[metaChecksumOffset:]),
	}
	h := fnv.New64a()
	h.Write(b[:metaChecksumOffset])
	switch {
	case m.magic != boltMagic:
		return m, errors.New("not a bbolt meta page (wrong magic number)")
	case m.version != boltVersion:
		return m, fmt.Errorf("format version %d, want %d", m.version, boltVersion)
	case m.checksum != h.Sum64():
		return m, errors.New("checksum mismatch")
	}
	return m, nil
}

// validate reads the store file's meta pages and free list with plain
// reads, before bbolt maps the file, and fails with a DamagedError on what
// would make bbolt read outside the file or panic as it opens it: a file
// cut short (the meta page counts more pages than the file holds), no
// valid meta page, a root or free-list page out of range or of the wrong
// kind. A missing or empty file is fine (bbolt creates one). It does not
// read the data pages: Check does that.
func validate(path string) (*fileMeta, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() == 0 {
		return nil, nil
	}
	fm, problem, err := readMeta(f, st.Size())
	if err != nil {
		return nil, err
	}
	if problem == "" {
		problem, err = checkPages(f, fm)
		if err != nil {
			return nil, err
		}
	}
	if problem != "" {
		return fm, &DamagedError{Path: path, Problem: problem}
	}
	return fm, nil
}

// readMeta picks the meta page bbolt would use: the valid one with the
// higher transaction id. problem says why there is none.
func readMeta(f *os.File, size int64) (fm *fileMeta, problem string, err error) {
	r := metaReader{f: f, buf: make([]byte, pageHeaderSize+metaSize)}
	var (
		ms   [2]meta
		errs [2]error
	)
	page, err := r.read(0)
	if err != nil {
		return nil, "", err
	}
	if page == nil {
		return nil, fmt.Sprintf("the file is %d bytes, too short for a bbolt file", size), nil
	}
	ms[0], errs[0] = decodeMeta(page)
	pageSize, err := r.pageSize(ms[0], errs[0], size)
	if err != nil {
		return nil, "", err
	}
	if pageSize < minPageSize || pageSize > maxPageSize || pageSize&(pageSize-1) != 0 {
		// Say what is wrong with page 1 where bbolt puts it by default.
		errs[1] = errors.New("missing")
		if page, err := r.read(int64(os.Getpagesize())); err == nil && page != nil {
			_, errs[1] = decodeMeta(page)
		}
		return nil, neitherMeta(errs), nil
	}
	if page, err = r.read(pageSize); err != nil {
		return nil, "", err
	}
	if page == nil {
		errs[1] = errors.New("missing")
	} else {
		ms[1], errs[1] = decodeMeta(page)
	}
	fm, problem = pickMeta(size, pageSize, ms, errs)
	return fm, problem, nil
}

// metaReader reads the meta pages of a file, one at a time.
type metaReader struct {
	f   *os.File
	buf []byte
}

// read returns the header and meta of the page at off, nil if the file
// ends before. The result is valid until the next read.
func (r *metaReader) read(off int64) ([]byte, error) {
	n, err := r.f.ReadAt(r.buf, off)
	switch {
	case err != nil && err != io.EOF:
		return nil, err
	case n < len(r.buf):
		return nil, nil // past the end of the file
	}
	return r.buf, nil
}

// pageSize returns the file's page size, which is in the meta pages:
// first's (page 0's), if it is valid, else that of a valid second meta
// page found where bbolt looks for one when the first does not validate,
// at every power of two. It returns 0 if there is none.
func (r *metaReader) pageSize(first meta, firstErr error, size int64) (int64, error) {
	if firstErr == nil && first.pageSize != 0 {
		return int64(first.pageSize), nil
	}
	for ps := int64(minPageSize); ps <= maxPageSize && ps < size; ps *= 2 {
		page, err := r.read(ps)
		if err != nil {
			return 0, err
		}
		if page == nil {
			continue
		}
		if m, err := decodeMeta(page); err == nil && m.pageSize != 0 {
			return int64(m.pageSize), nil
		}
	}
	return 0, nil
}

// pickMeta picks the meta page to use of the two read at page size
// pageSize (errs says what is wrong with each).
func pickMeta(size, pageSize int64, ms [2]meta, errs [2]error) (*fileMeta, string) {
	use := 0
	switch {
	case errs[0] != nil && errs[1] != nil:
		return nil, neitherMeta(errs)
	case errs[0] != nil:
		use = 1
	case errs[1] == nil && ms[1].txid > ms[0].txid:
		use = 1
	}
	m := ms[use]
	fm := &fileMeta{size: size, pageSize: int64(m.pageSize), pages: m.pgid, root: m.root, freelist: m.freelist, txid: m.txid, meta: use}
	if other := 1 - use; errs[other] != nil {
		fm.invalidMeta = fmt.Sprintf("meta page %d is invalid (%v); bbolt uses meta page %d (transaction %d), as after an interrupted commit, and the next commit rewrites it",
			other, errs[other], use, m.txid)
	}
	if fm.pageSize != pageSize {
		return fm, fmt.Sprintf("the meta pages disagree on the page size (%d, %d)", pageSize, fm.pageSize)
	}
	return fm, ""
}

func neitherMeta(errs [2]error) string {
	return fmt.Sprintf("neither meta page is valid (page 0: %v; page 1: %v)", errs[0], errs[1])
}

// checkPages checks the meta page's numbers against the file and reads
// the root page's header and the free list.
func checkPages(f *os.File, fm *fileMeta) (string, error) {
	if need := int64(fm.pages) * fm.pageSize; fm.pages > uint64(fm.size/fm.pageSize) {
		return fmt.Sprintf("the file is %d bytes, but its meta page counts %d pages of %d bytes, %d bytes: it was cut short",
			fm.size, fm.pages, fm.pageSize, need), nil
	}
	if fm.pages < 3 || fm.root < 2 || fm.root >= fm.pages {
		return fmt.Sprintf("the root page %d is outside the file's %d pages", fm.root, fm.pages), nil
	}
	if fm.freelist != noFreelist && (fm.freelist < 2 || fm.freelist >= fm.pages) {
		return fmt.Sprintf("the free list's page %d is outside the file's %d pages", fm.freelist, fm.pages), nil
	}
	hdr := make([]byte, pageHeaderSize)
	if _, err := f.ReadAt(hdr, int64(fm.root)*fm.pageSize); err != nil {
		return "", err
	}
	ne := binary.NativeEndian
	if id, flags := ne.Uint64(hdr), ne.Uint16(hdr[8:]); id != fm.root || flags != branchPageFlag && flags != leafPageFlag {
		return fmt.Sprintf("the root page %d is not a tree page (it says page %d, flags %#x)", fm.root, id, flags), nil
	}
	if fm.freelist == noFreelist {
		return "", nil
	}
	return checkFreelist(f, fm)
}

// checkFreelist reads the free list as bbolt will, and checks that it fits
// its pages and names pages of the file.
func checkFreelist(f *os.File, fm *fileMeta) (string, error) {
	hdr := make([]byte, pageHeaderSize+8)
	off := int64(fm.freelist) * fm.pageSize
	if _, err := f.ReadAt(hdr, off); err != nil {
		return "", err
	}
	ne := binary.NativeEndian
	id, flags, count, overflow := ne.Uint64(hdr), ne.Uint16(hdr[8:]), uint64(ne.Uint16(hdr[10:])), uint64(ne.Uint32(hdr[12:]))
	if id != fm.freelist || flags != freelistPageFlag {
		return fmt.Sprintf("the free list's page %d is not a free-list page (it says page %d, flags %#x)", fm.freelist, id, flags), nil
	}
	if fm.freelist+overflow >= fm.pages {
		return fmt.Sprintf("the free list (pages %d to %d) runs past the file's %d pages", fm.freelist, fm.freelist+overflow, fm.pages), nil
	}
	skip := uint64(0)
	if count == 0xFFFF { // more ids than the header's count holds: the first one is the count
		skip, count = 1, ne.Uint64(hdr[pageHeaderSize:])
	}
	room := ((overflow+1)*uint64(fm.pageSize) - pageHeaderSize) / 8
	if count > room || skip+count > room {
		return fmt.Sprintf("the free list counts %d pages, more than its %d pages hold", count, overflow+1), nil
	}
	ids := make([]byte, (skip+count)*8)
	if _, err := f.ReadAt(ids, off+pageHeaderSize); err != nil {
		return "", err
	}
	for i := skip; i < skip+count; i++ {
		if p := ne.Uint64(ids[i*8:]); p < 2 || p >= fm.pages {
			return fmt.Sprintf("the free list names page %d, outside the file's %d pages", p, fm.pages), nil
		}
	}
	fm.free = int(count)
	return "", nil
}
