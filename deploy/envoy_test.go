package deploy_test

import (
	"os"
	"path/filepath"
	"testing"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"                     // typed_config of the router filter
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3" // typed_config of the HTTP connection manager
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"                   // typed_config of the TLS transport socket
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"                          // the cluster's HTTP/2 options
	"google.golang.org/protobuf/encoding/protojson"
	"sigs.k8s.io/yaml"
)

// TestEnvoyConfig decodes deploy/envoy/envoy.yaml into Envoy's bootstrap
// protobuf (go-control-plane, the API Envoy itself is generated from),
// rejecting unknown fields and unknown typed_config types, and runs the
// API's field constraints (protoc-gen-validate). This is not Envoy
// running it: the example is not tested end to end.
func TestEnvoyConfig(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("envoy", "envoy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	var boot bootstrapv3.Bootstrap
	if err := protojson.Unmarshal(js, &boot); err != nil {
		t.Fatalf("envoy.yaml: %v", err)
	}
	if err := boot.ValidateAll(); err != nil {
		t.Fatalf("envoy.yaml: %v", err)
	}
	clusters := boot.GetStaticResources().GetClusters()
	if len(clusters) != 1 || clusters[0].GetName() != "wfd" {
		t.Fatalf("clusters %v, want one named wfd", clusters)
	}
}
