//go:build linux

package main_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/internal/devcert"
	"github.com/wfd-dev/wfd/internal/testlog"
	"github.com/wfd-dev/wfd/internal/testwait"
)

// testCA is a certificate authority made for one test, and a server
// certificate it signed for localhost and 127.0.0.1.
type testCA struct {
	pool     *x509.CertPool
	certFile string // the server's certificate (PEM)
	keyFile  string // its key (PEM)
}

func newTestCA(t *testing.T, dir string) *testCA {
	t.Helper()
	ca, err := devcert.NewCA("wfd test CA")
	if err != nil {
		t.Fatal(err)
	}
	pair, err := ca.Server("localhost", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile, err := pair.Write(dir, "wfd")
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{pool: ca.Pool(), certFile: certFile, keyFile: keyFile}
}

// nginxProc is an nginx master process (daemon off) serving wfd.conf.
type nginxProc struct {
	cmd    *exec.Cmd
	addr   string // its TLS listener
	dir    string
	out    *testlog.Buffer
	exited chan struct{}
	err    error
	http   *http.Client // HTTP/2 over TLS, trusting the test CA
	tls    *tls.Config
}

// http1 is an HTTP/1.1 client of nginx over TLS.
func (p *nginxProc) http1() *http.Client {
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	return &http.Client{Transport: &http.Transport{Protocols: &protocols, TLSClientConfig: p.tls.Clone()}}
}

// nginxBinary finds nginx, or skips the test: Debian's package puts it in
// /usr/sbin, which a user's PATH may lack.
func nginxBinary(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("nginx"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/nginx"); err == nil {
		return "/usr/sbin/nginx"
	}
	t.Skip("nginx is not installed (Debian: apt-get install nginx): the nginx example is not tested")
	return ""
}

// startNginx runs deploy/nginx/wfd.conf in front of upstream with TLS on
// a free loopback port, everything nginx writes in a temporary directory.
// Besides the addresses and the certificate, it applies edits to the
// example (old → new: every old replaced, each found at least once). It
// waits until gRPC health answers SERVING through nginx.
func startNginx(t *testing.T, upstream string, edits ...string) *nginxProc {
	t.Helper()
	bin := nginxBinary(t)
	// Not t.TempDir: when the test runs as root, nginx's workers run as
	// nobody and must reach their temporary directories, which a 0700
	// parent would hide.
	dir, err := os.MkdirTemp("", "wfd-nginx-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) }) // temporary files: nothing to report
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ca := newTestCA(t, dir)
	addr := freeAddr(t)

	example, err := os.ReadFile(filepath.Join("..", "..", "deploy", "nginx", "wfd.conf"))
	if err != nil {
		t.Fatal(err)
	}
	site := string(example)
	edits = append([]string{
		"127.0.0.1:7233", upstream,
		"listen 443 ssl http2;", "listen " + addr + " ssl http2;",
		"/etc/nginx/tls/wfd.crt", ca.certFile,
		"/etc/nginx/tls/wfd.key", ca.keyFile,
	}, edits...)
	for i := 0; i < len(edits); i += 2 {
		if !strings.Contains(site, edits[i]) {
			t.Fatalf("deploy/nginx/wfd.conf has no %q: update the test with the example", edits[i])
		}
		site = strings.ReplaceAll(site, edits[i], edits[i+1])
	}
	sitePath := filepath.Join(dir, "wfd.conf")
	if err := os.WriteFile(sitePath, []byte(site), 0o644); err != nil {
		t.Fatal(err)
	}

	// As root, the master stays root and the workers run as nobody; as
	// anyone else, both run as that user (the directive would only warn).
	userLine := ""
	if os.Geteuid() == 0 {
		group := "nogroup"
		if _, err := user.LookupGroup(group); err != nil {
			group = "nobody"
		}
		userLine = "user nobody " + group + ";"
	}
	conf := fmt.Sprintf(`daemon off;
master_process on;
worker_processes 1;
%[2]s
pid %[1]s/nginx.pid;
error_log %[1]s/error.log info;
events { worker_connections 256; }
http {
    access_log %[1]s/access.log;
    client_body_temp_path %[1]s/client_body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
    include %[3]s;
}
`, dir, userLine, sitePath)
	confPath := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}

	p := &nginxProc{addr: addr, dir: dir, out: &testlog.Buffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(bin, "-p", dir+"/", "-c", confPath, "-e", filepath.Join(dir, "error.log"))
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		// SIGQUIT: graceful stop; the workers go with the master.
		_ = p.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			t.Logf("nginx output:\n%s\nnginx error log:\n%s", p.out.String(), p.errorLog())
		}
	})

	// Each transport gets a clone: HTTP/2 set-up adds "h2" to the one it is given.
	p.tls = &tls.Config{RootCAs: ca.pool, ServerName: "localhost", MinVersion: tls.VersionTLS12}
	var protocols http.Protocols
	protocols.SetHTTP2(true)
	p.http = &http.Client{Transport: &http.Transport{Protocols: &protocols, TLSClientConfig: p.tls.Clone()}}
	health := connect.NewClient[healthpb.HealthCheckRequest, healthpb.HealthCheckResponse](
		p.http, p.url()+"/grpc.health.v1.Health/Check", connect.WithGRPC())
	testwait.Until(t, func() error {
		select {
		case <-p.exited:
			t.Fatalf("nginx exited: %v\n%s\n%s", p.err, p.out.String(), p.errorLog())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		res, err := health.CallUnary(ctx, connect.NewRequest(&healthpb.HealthCheckRequest{}))
		if err != nil {
			return fmt.Errorf("health through nginx: %w", err)
		}
		if res.Msg.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			return fmt.Errorf("health through nginx: %v", res.Msg.GetStatus())
		}
		return nil
	})
	return p
}

func (p *nginxProc) url() string { return "https://" + p.addr }

// client is a gRPC client of wfd through nginx, over TLS.
func (p *nginxProc) client() wfdv1connect.WorkflowServiceClient {
	return wfdv1connect.NewWorkflowServiceClient(p.http, p.url(), connect.WithGRPC())
}

func (p *nginxProc) errorLog() string {
	b, err := os.ReadFile(filepath.Join(p.dir, "error.log"))
	if err != nil {
		return err.Error()
	}
	return string(b)
}
