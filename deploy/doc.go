// Package deploy checks the deployment files beside it (the Kubernetes
// manifests: kubernetes/ for one replica on bbolt, kubernetes/replicas/ for
// several on PostgreSQL; and the Dockerfile) in its tests. It is a module
// of its own so that the Kubernetes API types it decodes the manifests with
// stay out of wfd's dependencies.
package deploy
