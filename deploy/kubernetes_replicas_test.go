package deploy_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// replicasDir holds the manifests of wfd as several replicas on
// PostgreSQL (a kustomization of its own, beside the bbolt StatefulSet).
var replicasDir = filepath.Join("kubernetes", "replicas")

type replicaManifestSet struct {
	deployments []*appsv1.Deployment
	services    []*corev1.Service
	pdbs        []*policyv1.PodDisruptionBudget
	netpols     []*networkingv1.NetworkPolicy
}

// replicaManifests decodes every document of kubernetes/replicas/*.yaml
// (but the kustomization) strictly into its API type, as manifests does
// for kubernetes/*.yaml.
func replicaManifests(t *testing.T) replicaManifestSet {
	t.Helper()
	var m replicaManifestSet
	decodeManifests(t, replicasDir, func(kind string) any {
		switch kind {
		case "apps/v1 Deployment":
			d := &appsv1.Deployment{}
			m.deployments = append(m.deployments, d)
			return d
		case "v1 Service":
			s := &corev1.Service{}
			m.services = append(m.services, s)
			return s
		case "policy/v1 PodDisruptionBudget":
			p := &policyv1.PodDisruptionBudget{}
			m.pdbs = append(m.pdbs, p)
			return p
		case "networking.k8s.io/v1 NetworkPolicy":
			p := &networkingv1.NetworkPolicy{}
			m.netpols = append(m.netpols, p)
			return p
		}
		return nil
	})
	return m
}

// TestKubernetesReplicas checks the replica-mode manifests against the API
// types (strict decoding) and against what wfd's replica mode needs: several
// replicas with no disk of their own, each named by its pod (replica id)
// and reached at its pod IP (advertise address), the store URL from a
// Secret, TLS between the replicas with one shared certificate name, the
// peer secret from a Secret, the StatefulSet's probes and termination
// grace rule, a disruption budget that still lets a drain evict a pod,
// spreading over nodes, and a Service that reaches the API port.
func TestKubernetesReplicas(t *testing.T) {
	m := replicaManifests(t)
	if len(m.deployments) != 1 {
		t.Fatalf("%d Deployments, want 1", len(m.deployments))
	}
	d := m.deployments[0]
	spec := d.Spec
	pod := spec.Template.Spec
	labels := spec.Template.Labels
	if spec.Replicas == nil || *spec.Replicas < 2 {
		t.Fatalf("replicas %v, want several", spec.Replicas)
	}
	replicas := *spec.Replicas
	if !selects(spec.Selector.MatchLabels, labels) {
		t.Errorf("the Deployment selects %v, which its pod template lacks", spec.Selector.MatchLabels)
	}
	// A rolling update never goes below the replica count: the old pod's
	// handlers move to replicas still running.
	if ru := spec.Strategy.RollingUpdate; spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || ru == nil ||
		ru.MaxUnavailable == nil || *ru.MaxUnavailable != intstr.FromInt32(0) || ru.MaxSurge == nil || ru.MaxSurge.IntValue() < 1 {
		t.Errorf("strategy %+v, want RollingUpdate with maxUnavailable 0 and maxSurge 1 or more", spec.Strategy)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	flags := serveFlags(t, c.Args)
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}

	port := portNamed(t, c.Ports, "grpc")
	if want := "0.0.0.0:" + itoa(port.ContainerPort); flags["addr"] != want {
		t.Errorf("--addr %q, want %q (the grpc container port, on every interface)", flags["addr"], want)
	}

	// No state on the pod: the store is PostgreSQL, every volume is a
	// Secret mounted read-only, and there is no --data to keep.
	if _, ok := flags["data"]; ok {
		t.Errorf("--data %q: with --store there is no bbolt directory to keep", flags["data"])
	}
	for _, v := range pod.Volumes {
		if v.Secret == nil {
			t.Errorf("volume %q is not a Secret: the replicas keep no state on the pod", v.Name)
		}
	}
	mounts := secretMounts(t, pod, c)
	fromSecret := func(what, path string) {
		t.Helper()
		inSecret(t, mounts, what, path)
	}

	// The replica's id is its pod's name (unique among live pods).
	if e, ok := env["WFD_REPLICA_ID"]; !ok || e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != "metadata.name" {
		t.Errorf("WFD_REPLICA_ID %+v, want the pod's metadata.name (downward API)", e)
	}
	if _, ok := flags["replica-id"]; ok {
		t.Error("--replica-id in the args: each pod's id comes from WFD_REPLICA_ID")
	}

	// The advertise address is the pod IP and the API port, through a
	// variable defined before it ($(VAR) expands only earlier ones).
	adv, ok := env["WFD_ADVERTISE_ADDR"]
	if !ok || adv.ValueFrom != nil {
		t.Fatalf("WFD_ADVERTISE_ADDR %+v, want a value $(POD_IP):port", adv)
	}
	ref := regexp.MustCompile(`^\$\(([A-Z_][A-Z0-9_]*)\):(\d+)$`).FindStringSubmatch(adv.Value)
	if ref == nil {
		t.Fatalf("WFD_ADVERTISE_ADDR %q, want $(VAR):port", adv.Value)
	}
	if ref[2] != itoa(port.ContainerPort) {
		t.Errorf("WFD_ADVERTISE_ADDR port %s, want the grpc container port %d", ref[2], port.ContainerPort)
	}
	ipVar := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == ref[1] })
	advAt := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "WFD_ADVERTISE_ADDR" })
	if ipVar < 0 || ipVar > advAt {
		t.Errorf("WFD_ADVERTISE_ADDR uses $(%s), which is not defined before it", ref[1])
	} else if e := c.Env[ipVar]; e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != "status.podIP" {
		t.Errorf("%s %+v, want the pod's status.podIP (downward API)", e.Name, e)
	}

	// The store URL, with its password, comes from a Secret; nothing in
	// the manifest holds one.
	if e := env["WFD_STORE"]; e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || e.ValueFrom.SecretKeyRef.Name == "" || e.ValueFrom.SecretKeyRef.Key == "" {
		t.Errorf("WFD_STORE %+v, want a secretKeyRef", e)
	}
	if _, ok := flags["store"]; ok {
		t.Error("--store in the args: the URL holds a password, take it from the Secret (WFD_STORE)")
	}
	for _, e := range c.Env {
		if strings.Contains(e.Value, "://") && strings.Contains(e.Value, "@") {
			t.Errorf("%s=%q looks like a URL with credentials: put it in a Secret", e.Name, e.Value)
		}
	}

	// The peer secret is a file from a Secret; wfd refuses it without
	// authentication.
	fromSecret("WFD_PEER_SECRET_FILE", env["WFD_PEER_SECRET_FILE"].Value)
	if flags["auth-tokens"] == "" && flags["auth-jwks"] == "" {
		t.Error("--peer-secret-file needs --auth-tokens or --auth-jwks (wfd refuses to start without)")
	}
	if f := flags["auth-tokens"]; f != "" {
		fromSecret("--auth-tokens", f)
	}

	// TLS from a Secret. The advertise address is a pod IP, which the
	// shared certificate cannot name: the replicas check one shared name.
	tls := flags["tls-cert"] != ""
	if tls {
		fromSecret("--tls-cert", flags["tls-cert"])
		fromSecret("--tls-key", flags["tls-key"])
		if flags["peer-server-name"] == "" {
			t.Error("TLS with the pod IP as advertise address: set --peer-server-name to the DNS name every replica's certificate holds")
		}
		if ca := flags["tls-client-ca"]; ca != "" {
			fromSecret("--tls-client-ca", ca)
			// The kubelet's probes present no client certificate.
			if flags["tls-client-auth"] != "verify-if-given" {
				t.Errorf("--tls-client-auth %q with --tls-client-ca: want verify-if-given, or the kubelet's probes fail their handshake", flags["tls-client-auth"])
			}
		}
	}

	// The StatefulSet's probes (over HTTPS when wfd serves TLS).
	sts := manifests(t).statefulSets
	scheme := corev1.URISchemeHTTP
	if tls {
		scheme = corev1.URISchemeHTTPS
	}
	sc := sts[0].Spec.Template.Spec.Containers[0]
	for _, p := range []struct {
		name        string
		got, single *corev1.Probe
	}{{"readiness", c.ReadinessProbe, sc.ReadinessProbe}, {"liveness", c.LivenessProbe, sc.LivenessProbe}, {"startup", c.StartupProbe, sc.StartupProbe}} {
		if p.got == nil || p.got.HTTPGet == nil {
			t.Errorf("%s probe: want an HTTP GET", p.name)
			continue
		}
		if p.got.HTTPGet.Scheme != scheme {
			t.Errorf("%s probe: scheme %q, want %q", p.name, p.got.HTTPGet.Scheme, scheme)
		}
		want := p.single.DeepCopy()
		want.HTTPGet.Scheme = p.got.HTTPGet.Scheme
		if !reflect.DeepEqual(p.got, want) {
			t.Errorf("%s probe %+v, want the StatefulSet's %+v", p.name, p.got, want)
		}
	}

	// The termination grace covers the shutdown delay, the drain and a
	// margin for the checkpoint (and freeing the leases).
	grace, err := time.ParseDuration(flags["grace"])
	if err != nil {
		t.Fatalf("--grace: %v (the manifest must set it, so the two numbers are read together)", err)
	}
	delay, err := time.ParseDuration(flags["shutdown-delay"])
	if err != nil || delay <= 0 {
		t.Fatalf("--shutdown-delay %q: want a positive delay, so that no call is refused while the endpoints still send it (%v)", flags["shutdown-delay"], err)
	}
	const margin = 10 * time.Second
	var termination time.Duration
	if pod.TerminationGracePeriodSeconds != nil {
		termination = time.Duration(*pod.TerminationGracePeriodSeconds) * time.Second
	}
	if termination < delay+grace+margin {
		t.Errorf("terminationGracePeriodSeconds %v, want at least --shutdown-delay + --grace %v + %v", termination, delay+grace, margin)
	}

	// Non-root, read-only, no privileges; resources requested.
	psc, csc := pod.SecurityContext, c.SecurityContext
	switch {
	case psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot:
		t.Error("pod: runAsNonRoot is not set")
	case psc.RunAsUser == nil || *psc.RunAsUser == 0 || psc.FSGroup == nil:
		t.Error("pod: want a non-zero runAsUser and an fsGroup (the Secrets' files must be readable)")
	case csc == nil || csc.ReadOnlyRootFilesystem == nil || !*csc.ReadOnlyRootFilesystem:
		t.Error("container: readOnlyRootFilesystem is not set")
	case csc.AllowPrivilegeEscalation == nil || *csc.AllowPrivilegeEscalation:
		t.Error("container: allowPrivilegeEscalation must be false")
	case csc.Capabilities == nil || !slices.Equal(csc.Capabilities.Drop, []corev1.Capability{"ALL"}):
		t.Error("container: capabilities must drop ALL")
	}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if _, ok := c.Resources.Requests[r]; !ok {
			t.Errorf("container: no %s request", r)
		}
	}
	if _, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok {
		t.Error("container: no memory limit")
	}

	// Spread over nodes: a topology spread on the hostname, or a pod
	// anti-affinity, that counts these pods.
	spread := false
	for _, tsc := range pod.TopologySpreadConstraints {
		if tsc.TopologyKey == corev1.LabelHostname && tsc.LabelSelector != nil && selects(tsc.LabelSelector.MatchLabels, labels) {
			spread = true
		}
	}
	if a := pod.Affinity; a != nil && a.PodAntiAffinity != nil {
		for _, term := range a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			pt := term.PodAffinityTerm
			spread = spread || pt.TopologyKey == corev1.LabelHostname && pt.LabelSelector != nil && selects(pt.LabelSelector.MatchLabels, labels)
		}
		for _, pt := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
			spread = spread || pt.TopologyKey == corev1.LabelHostname && pt.LabelSelector != nil && selects(pt.LabelSelector.MatchLabels, labels)
		}
	}
	if !spread {
		t.Errorf("no topology spread or anti-affinity over %s selecting the pods", corev1.LabelHostname)
	}

	// A disruption budget that keeps most replicas and still lets a drain
	// evict one.
	if len(m.pdbs) != 1 {
		t.Fatalf("%d PodDisruptionBudgets, want 1", len(m.pdbs))
	}
	pdb := m.pdbs[0]
	if ma := pdb.Spec.MinAvailable; ma == nil || ma.Type != intstr.Int || ma.IntVal < 1 || ma.IntVal >= replicas {
		t.Errorf("PodDisruptionBudget minAvailable %v, want a count from 1 to replicas-1 (%d)", ma, replicas-1)
	}
	if pdb.Spec.Selector == nil || !selects(pdb.Spec.Selector.MatchLabels, labels) {
		t.Errorf("PodDisruptionBudget selector %v does not select the pods", pdb.Spec.Selector)
	}

	// A ClusterIP Service for clients on the API port; no headless one
	// (replicas reach each other by pod IP, a Deployment has no
	// governing Service).
	if len(m.services) != 1 {
		t.Fatalf("%d Services, want 1", len(m.services))
	}
	svc := m.services[0]
	if svc.Spec.Type != corev1.ServiceTypeClusterIP || svc.Spec.ClusterIP == corev1.ClusterIPNone {
		t.Errorf("Service %s: type %q clusterIP %q, want a ClusterIP Service", svc.Name, svc.Spec.Type, svc.Spec.ClusterIP)
	}
	if len(svc.Spec.Selector) == 0 || !selects(svc.Spec.Selector, labels) {
		t.Errorf("Service %s selects %v, which the pod does not have", svc.Name, svc.Spec.Selector)
	}
	checkServicePorts(t, m.services, labels, c)
	for _, sp := range svc.Spec.Ports {
		if tls && sp.AppProtocol != nil && *sp.AppProtocol == "kubernetes.io/h2c" {
			t.Errorf("Service %s port %s: appProtocol h2c, but wfd serves TLS", svc.Name, sp.Name)
		}
	}
}

// TestKubernetesReplicasSecured checks the replicas as
// TestKubernetesSecured checks the StatefulSet: authentication, TLS, the
// console on the pod's network, and a NetworkPolicy that lets in only
// labelled clients, and the replicas themselves on the API port (they
// forward calls to each other).
func TestKubernetesReplicasSecured(t *testing.T) {
	m := replicaManifests(t)
	if len(m.deployments) != 1 {
		t.Fatalf("%d Deployments, want 1", len(m.deployments))
	}
	tmpl := m.deployments[0].Spec.Template
	c := tmpl.Spec.Containers[0]
	checkAuthAndTLS(t, tmpl.Spec, c, m.services)
	checkConsole(t, c)
	checkNetworkPolicy(t, m.netpols, tmpl.Labels, c, true)
	if s := tmpl.Annotations["prometheus.io/scheme"]; s != "https" {
		t.Errorf("annotation prometheus.io/scheme %q, want https (wfd serves /metrics over TLS)", s)
	}
}

// TestKubernetesReplicasServeFlags checks that every flag the replicas'
// container gives `wfd serve`, and every WFD_* variable it sets, is one
// serve reads, and that none is given both ways (the flag would win
// silently). serve's flags and variables are read from its source
// (cli/serve.go, cli/serve_auth.go) rather than from a built binary, to
// keep this module's tests light.
func TestKubernetesReplicasServeFlags(t *testing.T) {
	m := replicaManifests(t)
	if len(m.deployments) != 1 {
		t.Fatalf("%d Deployments, want 1", len(m.deployments))
	}
	checkServeFlagsKnown(t, m.deployments[0].Spec.Template.Spec.Containers[0])
}

// TestKubernetesServeFlags checks the StatefulSet's container as
// TestKubernetesReplicasServeFlags checks the replicas'.
func TestKubernetesServeFlags(t *testing.T) {
	sts := manifests(t).statefulSets
	if len(sts) != 1 {
		t.Fatalf("%d StatefulSets, want 1", len(sts))
	}
	checkServeFlagsKnown(t, sts[0].Spec.Template.Spec.Containers[0])
}

// checkServeFlagsKnown checks that every flag a container gives `wfd
// serve`, and every WFD_* variable it sets, is one serve reads, and that
// none is given both ways.
func checkServeFlagsKnown(t *testing.T, c corev1.Container) {
	t.Helper()
	known, vars := serveFlagSet(t)
	flags := serveFlags(t, c.Args)
	for name := range flags {
		if !known[name] {
			t.Errorf("--%s: wfd serve has no such flag", name)
		}
	}
	referenced := map[string]bool{}
	for _, e := range c.Env {
		for _, r := range regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`).FindAllStringSubmatch(e.Value, -1) {
			referenced[r[1]] = true
		}
	}
	for _, e := range c.Env {
		switch flag, ok := vars[e.Name]; {
		case ok:
			if _, both := flags[flag]; both {
				t.Errorf("%s and --%s both set: the flag wins", e.Name, flag)
			}
		case strings.HasPrefix(e.Name, "WFD_"):
			t.Errorf("%s: wfd serve reads no such variable", e.Name)
		case referenced[e.Name], e.Name == "GOMEMLIMIT", strings.HasPrefix(e.Name, "OTEL_"):
		default:
			t.Errorf("%s: neither a variable of wfd serve (or Go, or OpenTelemetry) nor used by another variable", e.Name)
		}
	}
}

// serveFlagSet reads `wfd serve`'s flag names and the variables that set
// them from the source of the cli package: the fs.*Var (and fs.Func...)
// definitions, fs.fromEnv (WFD_<NAME>) and fs.envAs (a name of its own,
// possibly built in a loop over a list of flag names).
func serveFlagSet(t *testing.T) (flags map[string]bool, vars map[string]string) {
	t.Helper()
	flags, vars = map[string]bool{}, map[string]string{}
	fset := token.NewFileSet()
	for _, name := range []string{"serve.go", "serve_auth.go"} {
		f, err := parser.ParseFile(fset, filepath.Join("..", "cli", name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		var walk func(n ast.Node, bound map[string]string)
		walk = func(n ast.Node, bound map[string]string) {
			ast.Inspect(n, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.RangeStmt:
					// for _, n := range []string{"a", "b"} { ... }: walk the
					// body once per element, n bound to it.
					v, ok := n.Value.(*ast.Ident)
					lit, ok2 := n.X.(*ast.CompositeLit)
					if !ok || !ok2 {
						return true
					}
					for _, el := range lit.Elts {
						s, err := evalString(el, bound)
						if err != nil {
							return true // not a list of strings: walk it as it is
						}
						b := map[string]string{v.Name: s}
						for k, x := range bound {
							b[k] = x
						}
						walk(n.Body, b)
					}
					return false
				case *ast.CallExpr:
					sel, ok := n.Fun.(*ast.SelectorExpr)
					if !ok {
						return true
					}
					if recv, ok := sel.X.(*ast.Ident); !ok || recv.Name != "fs" {
						return true
					}
					arg := func(i int) string {
						if i >= len(n.Args) {
							t.Fatalf("%s: fs.%s: too few arguments", fset.Position(n.Pos()), sel.Sel.Name)
						}
						s, err := evalString(n.Args[i], bound)
						if err != nil {
							t.Fatalf("%s: fs.%s: %v: teach serveFlagSet this form", fset.Position(n.Pos()), sel.Sel.Name, err)
						}
						return s
					}
					switch m := sel.Sel.Name; {
					case m == "fromEnv":
						for i := range n.Args {
							f := arg(i)
							vars["WFD_"+strings.ToUpper(strings.ReplaceAll(f, "-", "_"))] = f
						}
					case m == "envAs":
						vars[arg(1)] = arg(0)
					case strings.HasSuffix(m, "Var"):
						flags[arg(1)] = true
					case m == "Func" || m == "BoolFunc" || m == "String" || m == "Bool" || m == "Int" || m == "Duration":
						flags[arg(0)] = true
					}
				}
				return true
			})
		}
		walk(f, nil)
	}
	// The reading itself: a few flags and variables wfd serve is known
	// to have.
	for _, f := range []string{"addr", "store", "replica-id", "advertise-addr", "tls-cert", "peer-server-name", "peer-secret-file", "auth-tokens"} {
		if !flags[f] {
			t.Fatalf("serve's flags read from ../cli lack --%s: %v", f, flags)
		}
	}
	for _, v := range []string{"WFD_STORE", "WFD_REPLICA_ID", "WFD_ADVERTISE_ADDR", "WFD_PEER_SECRET_FILE", "WFD_SERVE_TLS_CERT"} {
		if vars[v] == "" {
			t.Fatalf("serve's variables read from ../cli lack %s: %v", v, vars)
		}
	}
	for v, f := range vars {
		if !flags[f] {
			t.Errorf("%s sets --%s, which serve does not define", v, f)
		}
	}
	return flags, vars
}

// evalString evaluates a string expression of the cli source: a literal,
// a bound loop variable, + and the strings.ToUpper and strings.ReplaceAll
// of those.
func evalString(e ast.Expr, bound map[string]string) (string, error) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind == token.STRING {
			return strconv.Unquote(e.Value)
		}
	case *ast.Ident:
		if s, ok := bound[e.Name]; ok {
			return s, nil
		}
	case *ast.BinaryExpr:
		if e.Op == token.ADD {
			x, err := evalString(e.X, bound)
			if err != nil {
				return "", err
			}
			y, err := evalString(e.Y, bound)
			return x + y, err
		}
	case *ast.CallExpr:
		sel, ok := e.Fun.(*ast.SelectorExpr)
		if pkg, ok2 := sel.X.(*ast.Ident); !ok || !ok2 || pkg.Name != "strings" {
			break
		}
		var args []string
		for _, a := range e.Args {
			s, err := evalString(a, bound)
			if err != nil {
				return "", err
			}
			args = append(args, s)
		}
		switch {
		case sel.Sel.Name == "ToUpper" && len(args) == 1:
			return strings.ToUpper(args[0]), nil
		case sel.Sel.Name == "ReplaceAll" && len(args) == 3:
			return strings.ReplaceAll(args[0], args[1], args[2]), nil
		}
	}
	return "", fmt.Errorf("cannot evaluate %T as a string", e)
}

// TestKubernetesReplicasKustomization checks that the replicas'
// kustomization lists every manifest beside it.
func TestKubernetesReplicasKustomization(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(replicasDir, "kustomization.yaml"))
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
	files, _ := filepath.Glob(filepath.Join(replicasDir, "*.yaml"))
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

// selects reports whether a selector's labels are all in labels.
func selects(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}
