package deploy_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// singleManifests are the documents of deploy/kubernetes/*.yaml.
type singleManifests struct {
	statefulSets []*appsv1.StatefulSet
	services     []*corev1.Service
	netpols      []*networkingv1.NetworkPolicy
}

// manifests reads every document of deploy/kubernetes/*.yaml (but the
// kustomization) and decodes it strictly into the Kubernetes API type of
// its kind: an unknown or misspelt field, a duplicate key, or a value of
// the wrong type fails, as `kubectl apply --validate=strict` would. The
// types are the source the API server's OpenAPI schemas are generated
// from (k8s.io/api, the version in go.mod).
func manifests(t *testing.T) singleManifests {
	t.Helper()
	var m singleManifests
	decodeManifests(t, "kubernetes", func(kind string) any {
		switch kind {
		case "apps/v1 StatefulSet":
			s := &appsv1.StatefulSet{}
			m.statefulSets = append(m.statefulSets, s)
			return s
		case "v1 Service":
			s := &corev1.Service{}
			m.services = append(m.services, s)
			return s
		case "networking.k8s.io/v1 NetworkPolicy":
			p := &networkingv1.NetworkPolicy{}
			m.netpols = append(m.netpols, p)
			return p
		}
		return nil
	})
	return m
}

// decodeManifests decodes every document of dir/*.yaml (but the
// kustomization) strictly into the object newObj returns for its kind
// ("apiVersion kind"); nil: a kind the test has no check for, which fails.
func decodeManifests(t *testing.T, dir string, newObj func(kind string) any) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s: %v", dir, err)
	}
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range splitYAML(b) {
			var meta struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
			}
			if err := yaml.Unmarshal(doc, &meta); err != nil {
				t.Fatalf("%s #%d: %v", f, i, err)
			}
			obj := newObj(meta.APIVersion + " " + meta.Kind)
			if obj == nil {
				t.Fatalf("%s #%d: %s %s: no check for this kind: add it to the test", f, i, meta.APIVersion, meta.Kind)
			}
			if err := yaml.UnmarshalStrict(doc, obj); err != nil {
				t.Errorf("%s #%d (%s): %v", f, i, meta.Kind, err)
			}
		}
	}
}

// splitYAML splits a multi-document YAML file at its "---" lines.
func splitYAML(b []byte) [][]byte {
	var docs [][]byte
	for _, d := range bytes.Split(append([]byte("\n"), b...), []byte("\n---\n")) {
		if len(bytes.TrimSpace(stripComments(d))) > 0 {
			docs = append(docs, d)
		}
	}
	return docs
}

func stripComments(b []byte) []byte {
	var out []byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(l), []byte("#")) {
			out = append(out, l...)
			out = append(out, '\n')
		}
	}
	return out
}

// TestKubernetesManifests checks the manifests against the API types
// (strict decoding) and against what wfd needs: one replica (bbolt is one
// process on one disk), a volume claim mounted at --data, probes on the
// paths the server answers, a termination grace above --grace with a
// margin for the final checkpoint, a non-root read-only container, and
// Services that reach the API port by name.
func TestKubernetesManifests(t *testing.T) {
	m := manifests(t)
	sts, svcs := m.statefulSets, m.services
	if len(sts) != 1 {
		t.Fatalf("%d StatefulSets, want 1", len(sts))
	}
	s := sts[0]
	spec := s.Spec
	pod := spec.Template.Spec
	if spec.Replicas == nil || *spec.Replicas != 1 {
		t.Errorf("replicas %v, want exactly 1: the bbolt store is one process on one disk", spec.Replicas)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	flags := serveFlags(t, c.Args)

	// The API port, by name, is the one --addr listens on.
	port := portNamed(t, c.Ports, "grpc")
	if want := "0.0.0.0:" + itoa(port.ContainerPort); flags["addr"] != want {
		t.Errorf("--addr %q, want %q (the grpc container port, on every interface)", flags["addr"], want)
	}

	// The store: a claim template mounted where --data points.
	if len(spec.VolumeClaimTemplates) != 1 {
		t.Fatalf("%d volumeClaimTemplates, want 1", len(spec.VolumeClaimTemplates))
	}
	claim := spec.VolumeClaimTemplates[0]
	if !slices.Equal(claim.Spec.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}) {
		t.Errorf("claim access modes %v, want ReadWriteOnce only", claim.Spec.AccessModes)
	}
	if _, ok := claim.Spec.Resources.Requests[corev1.ResourceStorage]; !ok {
		t.Error("the claim requests no storage")
	}
	mounted := false
	for _, m := range c.VolumeMounts {
		if m.Name == claim.Name && m.MountPath == flags["data"] && !m.ReadOnly {
			mounted = true
		}
	}
	if !mounted {
		t.Errorf("claim %q is not mounted read-write at --data %q", claim.Name, flags["data"])
	}

	// Probes on the API port (over HTTPS: TestKubernetesSecured).
	for _, p := range []struct {
		name  string
		probe *corev1.Probe
		path  string
	}{{"readiness", c.ReadinessProbe, "/readyz"}, {"liveness", c.LivenessProbe, "/healthz"}, {"startup", c.StartupProbe, "/healthz"}} {
		if p.probe == nil || p.probe.HTTPGet == nil {
			t.Errorf("%s probe: want an HTTP GET of %s", p.name, p.path)
			continue
		}
		g := p.probe.HTTPGet
		if g.Path != p.path || g.Port != intstr.FromString(port.Name) {
			t.Errorf("%s probe: GET %s on port %v, want %s on %q", p.name, g.Path, g.Port.String(), p.path, port.Name)
		}
	}

	// Kubernetes waits terminationGracePeriodSeconds before SIGKILL: the
	// shutdown delay (readiness failing while calls are still served, so
	// the endpoints drop the pod first), the drain (--grace) and then the
	// checkpoint of every handler must fit.
	grace, err := time.ParseDuration(flags["grace"])
	if err != nil {
		t.Fatalf("--grace: %v (the manifest must set it, so the two numbers are read together)", err)
	}
	delay, err := time.ParseDuration(flags["shutdown-delay"])
	if err != nil || delay <= 0 {
		t.Fatalf("--shutdown-delay %q: want a positive delay, so that no call is refused while the endpoints still send it (%v)", flags["shutdown-delay"], err)
	}
	grace += delay
	const margin = 10 * time.Second
	var termination time.Duration
	if pod.TerminationGracePeriodSeconds != nil {
		termination = time.Duration(*pod.TerminationGracePeriodSeconds) * time.Second
	}
	if termination < grace+margin {
		t.Errorf("terminationGracePeriodSeconds %v, want at least --shutdown-delay + --grace %v + %v", termination, grace, margin)
	}

	// Non-root, read-only, no privileges.
	psc, sc := pod.SecurityContext, c.SecurityContext
	switch {
	case psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot:
		t.Error("pod: runAsNonRoot is not set")
	case psc.RunAsUser == nil || *psc.RunAsUser == 0 || psc.FSGroup == nil:
		t.Error("pod: want a non-zero runAsUser and an fsGroup (the volume must be writable)")
	case sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
		t.Error("container: readOnlyRootFilesystem is not set")
	case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
		t.Error("container: allowPrivilegeEscalation must be false")
	case sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}):
		t.Error("container: capabilities must drop ALL")
	}
	if _, ok := c.Resources.Requests[corev1.ResourceMemory]; !ok {
		t.Error("container: no memory request")
	}
	if _, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok {
		t.Error("container: no memory limit")
	}

	// Services: they select the pod and reach its ports by name, grpc
	// among them; the StatefulSet's governing Service is headless.
	labels := spec.Template.Labels
	checkServicePorts(t, svcs, labels, c)
	var governing bool
	for _, svc := range svcs {
		if svc.Name == spec.ServiceName {
			governing = svc.Spec.ClusterIP == corev1.ClusterIPNone
		} else if svc.Spec.Type != corev1.ServiceTypeClusterIP {
			t.Errorf("Service %s: type %q, want ClusterIP", svc.Name, svc.Spec.Type)
		}
	}
	if !governing {
		t.Errorf("no headless Service named %q (the StatefulSet's serviceName)", spec.ServiceName)
	}
	for k, v := range spec.Selector.MatchLabels {
		if labels[k] != v {
			t.Errorf("the StatefulSet selects %s=%s, which its pod template lacks", k, v)
		}
	}
}

// TestKubernetesSecured checks that the StatefulSet is not open to
// whoever reaches the pod: authentication on (tokens from a Secret), TLS
// (certificate and key from a Secret; the probes and Services speak it),
// the console on the pod's network like the API (with the same
// authentication and TLS), and a NetworkPolicy that lets only pods
// labelled wfd-client: "true" reach the pod's ports.
func TestKubernetesSecured(t *testing.T) {
	m := manifests(t)
	if len(m.statefulSets) != 1 {
		t.Fatalf("%d StatefulSets, want 1", len(m.statefulSets))
	}
	tmpl := m.statefulSets[0].Spec.Template
	c := tmpl.Spec.Containers[0]
	checkAuthAndTLS(t, tmpl.Spec, c, m.services)
	checkConsole(t, c)
	checkNetworkPolicy(t, m.netpols, tmpl.Labels, c, false)
	if s := tmpl.Annotations["prometheus.io/scheme"]; s != "https" {
		t.Errorf("annotation prometheus.io/scheme %q, want https (wfd serves /metrics over TLS)", s)
	}
}

// TestKustomization checks that kustomization.yaml lists every manifest.
func TestKustomization(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("kubernetes", "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		APIVersion string   `json:"apiVersion"`
		Kind       string   `json:"kind"`
		Resources  []string `json:"resources"`
	}
	if err := yaml.UnmarshalStrict(b, &k); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join("kubernetes", "*.yaml"))
	var want []string
	for _, f := range files {
		if b := filepath.Base(f); b != "kustomization.yaml" {
			want = append(want, b)
		}
	}
	slices.Sort(k.Resources)
	if !slices.Equal(k.Resources, want) {
		t.Errorf("kustomization resources %v, want %v", k.Resources, want)
	}
}

// serveFlags reads `serve --name=value ...` args (the manifest's style).
func serveFlags(t *testing.T, args []string) map[string]string {
	t.Helper()
	if len(args) == 0 || args[0] != "serve" {
		t.Fatalf("args %q, want serve and its flags", args)
	}
	flags := map[string]string{}
	for _, a := range args[1:] {
		name, value, ok := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !ok || !strings.HasPrefix(a, "--") {
			t.Fatalf("arg %q: write flags as --name=value", a)
		}
		flags[name] = value
	}
	return flags
}

func portNamed(t *testing.T, ports []corev1.ContainerPort, name string) corev1.ContainerPort {
	t.Helper()
	for _, p := range ports {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no container port named %q", name)
	return corev1.ContainerPort{}
}

func itoa[T int32 | int64](n T) string { return strconv.FormatInt(int64(n), 10) }
