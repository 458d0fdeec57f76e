package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"
)

// File is the --auth-tokens file (YAML, or JSON, which YAML reads too):
//
//	tokens:
//	  - token: "s3cret"               # or sha256: <hex of SHA-256(token)>
//	    subject: alice
//	    roles: [reader, starter, tasks]
//	certificates:                     # roles of mTLS client certificates
//	  - subject: worker-1.example.com # the certificate's subject (see Authenticator)
//	    roles: [worker]
type File struct {
	Tokens       []TokenEntry `yaml:"tokens" json:"tokens"`
	Certificates []CertEntry  `yaml:"certificates" json:"certificates"`
}

// TokenEntry maps one static bearer token to an identity. Token holds the
// token itself, or SHA256 its SHA-256 in hex (so the file need not hold
// the secret).
type TokenEntry struct {
	Token   string   `yaml:"token" json:"token"`
	SHA256  string   `yaml:"sha256" json:"sha256"`
	Subject string   `yaml:"subject" json:"subject"`
	Roles   []string `yaml:"roles" json:"roles"`
}

// CertEntry gives roles to the client certificates whose subject is Subject.
type CertEntry struct {
	Subject string   `yaml:"subject" json:"subject"`
	Roles   []string `yaml:"roles" json:"roles"`
}

// staticTokens holds the tokens hashed; lookups hash the presented token
// and compare it with every entry in constant time.
type staticTokens struct {
	hashes [][sha256.Size]byte
	ids    []Identity
}

func loadFile(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth: token file: %w", err)
	}
	var f File
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("auth: token file %s: %w", path, err)
	}
	return &f, nil
}

func newStaticTokens(f *File) (*staticTokens, error) {
	st := &staticTokens{}
	for i, e := range f.Tokens {
		if e.Subject == "" {
			return nil, fmt.Errorf("auth: token file: entry %d has no subject", i+1)
		}
		var h [sha256.Size]byte
		switch {
		case e.Token != "" && e.SHA256 == "":
			h = sha256.Sum256([]byte(e.Token))
		case e.Token == "" && e.SHA256 != "":
			b, err := hex.DecodeString(e.SHA256)
			if err != nil || len(b) != sha256.Size {
				return nil, fmt.Errorf("auth: token file: entry %d (%s): sha256 must be 64 hex digits", i+1, e.Subject)
			}
			copy(h[:], b)
		default:
			return nil, fmt.Errorf("auth: token file: entry %d (%s) needs exactly one of token and sha256", i+1, e.Subject)
		}
		st.hashes = append(st.hashes, h)
		st.ids = append(st.ids, Identity{Subject: e.Subject, Roles: e.Roles})
	}
	return st, nil
}

// lookup finds the identity of token. It looks at every entry whatever
// matches, so its time does not tell which entry (or how much of one) matched.
func (st *staticTokens) lookup(token string) (Identity, bool) {
	h := sha256.Sum256([]byte(token))
	found := -1
	for i := range st.hashes {
		if subtle.ConstantTimeCompare(h[:], st.hashes[i][:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return Identity{}, false
	}
	return st.ids[found], true
}

// tokenFile is the token file, read again when it changes: a call checks
// its size and modification time at most every tokenFileCheck. A file
// that no longer reads keeps the previous tokens (and is logged).
type tokenFile struct {
	path string
	now  func() time.Time
	log  *slog.Logger

	mu        sync.Mutex
	checked   time.Time
	mod       time.Time
	size      int64
	tokens    *staticTokens
	certRoles map[string][]string
}

const tokenFileCheck = 2 * time.Second

func openTokenFile(path string, now func() time.Time, log *slog.Logger) (*tokenFile, error) {
	tf := &tokenFile{path: path, now: now, log: log}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("auth: token file: %w", err)
	}
	if err := tf.load(); err != nil {
		return nil, err
	}
	tf.checked, tf.mod, tf.size = now(), fi.ModTime(), fi.Size()
	return tf, nil
}

func (tf *tokenFile) load() error {
	f, err := loadFile(tf.path)
	if err != nil {
		return err
	}
	st, err := newStaticTokens(f)
	if err != nil {
		return err
	}
	roles := map[string][]string{}
	for _, e := range f.Certificates {
		roles[e.Subject] = append(roles[e.Subject], e.Roles...)
	}
	tf.tokens, tf.certRoles = st, roles
	return nil
}

// current returns the tokens and certificate roles, reading the file
// again if it changed.
func (tf *tokenFile) current() (*staticTokens, map[string][]string) {
	tf.mu.Lock()
	defer tf.mu.Unlock()
	if now := tf.now(); now.Sub(tf.checked) >= tokenFileCheck {
		tf.checked = now
		if fi, err := os.Stat(tf.path); err == nil && (!fi.ModTime().Equal(tf.mod) || fi.Size() != tf.size) {
			tf.mod, tf.size = fi.ModTime(), fi.Size()
			if err := tf.load(); err != nil {
				tf.log.Warn("token file changed but does not read; keeping the previous tokens", "err", err)
			} else {
				tf.log.Info("token file read again", "path", tf.path, "tokens", len(tf.tokens.ids))
			}
		}
	}
	return tf.tokens, tf.certRoles
}
