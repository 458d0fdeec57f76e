package deploy_test

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// clientLabel is the label a pod needs for the NetworkPolicies to let it
// reach wfd (README "Deploying").
const clientLabel = "wfd-client"

// secretMounts returns the pod's Secret volumes by mount path (path →
// Secret name), checking that each is mounted read-only and whole (no
// subPath: a renewed certificate or token file must reach the running
// pod) and readable by the pod's fsGroup only.
func secretMounts(t *testing.T, pod corev1.PodSpec, c corev1.Container) map[string]string {
	t.Helper()
	mounts := map[string]string{}
	for _, v := range pod.Volumes {
		if v.Secret == nil {
			continue
		}
		for _, mnt := range c.VolumeMounts {
			if mnt.Name != v.Name {
				continue
			}
			if !mnt.ReadOnly || mnt.SubPath != "" {
				t.Errorf("Secret volume %q at %s: want it read-only and whole (no subPath, so renewed files reach the pod)", v.Name, mnt.MountPath)
			}
			mounts[mnt.MountPath] = v.Secret.SecretName
		}
		if m := v.Secret.DefaultMode; m == nil || *m&0o040 == 0 || *m&0o007 != 0 {
			t.Errorf("Secret volume %q: defaultMode %v, want group-readable (fsGroup) and nothing for others", v.Name, v.Secret.DefaultMode)
		}
	}
	return mounts
}

// inSecret fails t unless path (what names it) is a file of a mounted
// Secret.
func inSecret(t *testing.T, mounts map[string]string, what, path string) {
	t.Helper()
	for dir := range mounts {
		if strings.HasPrefix(path, dir+"/") {
			return
		}
	}
	if path == "" {
		t.Errorf("%s is not set", what)
	} else {
		t.Errorf("%s %q is not in a mounted Secret (%v)", what, path, mounts)
	}
}

// checkAuthAndTLS checks that a wfd container serves its ports with
// authentication (tokens or JWTs; a tokens file from a Secret) and with
// TLS (the certificate and key from a Secret), that its probes then speak
// HTTPS, and that the Services do not call its ports h2c. The clients
// send a bearer token only over TLS (or to a loopback address), so
// authentication on a plaintext port would shut every client out.
func checkAuthAndTLS(t *testing.T, pod corev1.PodSpec, c corev1.Container, svcs []*corev1.Service) {
	t.Helper()
	flags := serveFlags(t, c.Args)
	mounts := secretMounts(t, pod, c)
	if flags["auth-tokens"] == "" && flags["auth-jwks"] == "" {
		t.Error("authentication is off: set --auth-tokens (a file from a Secret) or --auth-jwks")
	}
	if f, ok := flags["auth-tokens"]; ok {
		inSecret(t, mounts, "--auth-tokens", f)
	}
	inSecret(t, mounts, "--tls-cert", flags["tls-cert"])
	inSecret(t, mounts, "--tls-key", flags["tls-key"])
	if ca, ok := flags["tls-client-ca"]; ok {
		inSecret(t, mounts, "--tls-client-ca", ca)
	}
	for _, p := range []struct {
		name  string
		probe *corev1.Probe
	}{{"readiness", c.ReadinessProbe}, {"liveness", c.LivenessProbe}, {"startup", c.StartupProbe}} {
		if p.probe != nil && p.probe.HTTPGet != nil && p.probe.HTTPGet.Scheme != corev1.URISchemeHTTPS {
			t.Errorf("%s probe: scheme %q, want HTTPS (wfd serves TLS)", p.name, p.probe.HTTPGet.Scheme)
		}
	}
	for _, svc := range svcs {
		for _, sp := range svc.Spec.Ports {
			if sp.AppProtocol == nil || *sp.AppProtocol != "https" {
				t.Errorf("Service %s port %s: appProtocol %s, want https (wfd serves TLS)", svc.Name, sp.Name, ptrString(sp.AppProtocol))
			}
		}
	}
}

// checkConsole checks that the web console listens on every interface of
// the pod, on the container port named console (at its default,
// 127.0.0.1, no one outside the pod reaches it).
func checkConsole(t *testing.T, c corev1.Container) {
	t.Helper()
	flags := serveFlags(t, c.Args)
	port := portNamed(t, c.Ports, "console")
	if want := "0.0.0.0:" + itoa(port.ContainerPort); flags["console-addr"] != want {
		t.Errorf("--console-addr %q, want %q (the console container port, on every interface)", flags["console-addr"], want)
	}
}

// checkServicePorts checks that each Service selects the pods and that its
// ports are the container's, by name: grpc among them.
func checkServicePorts(t *testing.T, svcs []*corev1.Service, labels map[string]string, c corev1.Container) {
	t.Helper()
	for _, svc := range svcs {
		if len(svc.Spec.Selector) == 0 || !selects(svc.Spec.Selector, labels) {
			t.Errorf("Service %s selects %v, which the pod does not have", svc.Name, svc.Spec.Selector)
		}
		var names []string
		for _, sp := range svc.Spec.Ports {
			names = append(names, sp.Name)
			portNamed(t, c.Ports, sp.Name)
			if sp.TargetPort != intstr.FromString(sp.Name) || sp.AppProtocol == nil || *sp.AppProtocol == "" || sp.Protocol != corev1.ProtocolTCP {
				t.Errorf("Service %s: port %+v, want TCP, targetPort its own name and an appProtocol", svc.Name, sp)
			}
		}
		if !slices.Contains(names, "grpc") {
			t.Errorf("Service %s: ports %v, want grpc among them", svc.Name, names)
		}
	}
}

// checkNetworkPolicy checks that one NetworkPolicy selects the wfd pods
// and lets in only pods labelled clientLabel (and, with peers, the wfd
// pods themselves: replicas forward calls to each other), on the
// container's ports by name, grpc among them; nothing else reaches the
// pods (a rule with no from, or no ports, would let in anyone, or on any
// port).
func checkNetworkPolicy(t *testing.T, pols []*networkingv1.NetworkPolicy, labels map[string]string, c corev1.Container, peers bool) {
	t.Helper()
	var pol *networkingv1.NetworkPolicy
	for _, p := range pols {
		if selects(p.Spec.PodSelector.MatchLabels, labels) && len(p.Spec.PodSelector.MatchLabels) > 0 {
			if pol != nil {
				t.Errorf("NetworkPolicies %s and %s both select the wfd pods: keep one", pol.Name, p.Name)
			}
			pol = p
		}
	}
	if pol == nil {
		t.Fatalf("no NetworkPolicy selects the wfd pods (%v)", labels)
	}
	if !slices.Contains(pol.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) {
		t.Errorf("NetworkPolicy %s: policyTypes %v, want Ingress", pol.Name, pol.Spec.PolicyTypes)
	}
	if len(pol.Spec.Ingress) == 0 {
		t.Fatalf("NetworkPolicy %s has no ingress rule: no client reaches wfd", pol.Name)
	}
	clients, fromPeers := map[string]bool{}, false // ports open to labelled clients; to the wfd pods
	for i, r := range pol.Spec.Ingress {
		if len(r.From) == 0 {
			t.Errorf("NetworkPolicy %s rule %d: no from, which lets in every source", pol.Name, i)
		}
		if len(r.Ports) == 0 {
			t.Errorf("NetworkPolicy %s rule %d: no ports, which opens every port", pol.Name, i)
		}
		var ports []string
		for _, p := range r.Ports {
			if p.Port == nil || p.Port.Type != intstr.String || p.EndPort != nil {
				t.Errorf("NetworkPolicy %s rule %d: port %v, want a container port by name", pol.Name, i, p.Port)
				continue
			}
			portNamed(t, c.Ports, p.Port.StrVal)
			ports = append(ports, p.Port.StrVal)
		}
		for _, peer := range r.From {
			switch {
			case peer.IPBlock != nil:
				t.Errorf("NetworkPolicy %s rule %d: an ipBlock; let clients in by label", pol.Name, i)
			case peer.PodSelector == nil || len(peer.PodSelector.MatchLabels) == 0 && len(peer.PodSelector.MatchExpressions) == 0:
				t.Errorf("NetworkPolicy %s rule %d: a peer %+v selecting every pod (of a namespace); select clients by label", pol.Name, i, peer)
			case peer.PodSelector.MatchLabels[clientLabel] == "true":
				for _, p := range ports {
					clients[p] = true
				}
			case peers && selects(peer.PodSelector.MatchLabels, labels) && peer.NamespaceSelector == nil:
				fromPeers = fromPeers || slices.Contains(ports, "grpc")
			default:
				t.Errorf("NetworkPolicy %s rule %d: peer %v, want pods labelled %s: \"true\"", pol.Name, i, peer.PodSelector.MatchLabels, clientLabel)
			}
		}
	}
	if !clients["grpc"] {
		t.Errorf("NetworkPolicy %s: pods labelled %s: \"true\" cannot reach port grpc", pol.Name, clientLabel)
	}
	if peers && !fromPeers {
		t.Errorf("NetworkPolicy %s: the replicas cannot reach each other's grpc port (they forward calls there)", pol.Name)
	}
}

func ptrString(s *string) string {
	if s == nil {
		return "unset"
	}
	return *s
}
