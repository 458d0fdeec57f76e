// Command protoc-gen-go-grpc-pkg runs protoc-gen-go-grpc (the command given
// as its arguments) so that the gRPC stubs of a file land in a Go package of
// their own next to its messages: for go_package "…/gen/wfd/v1;wfdv1" in
// "…/gen/wfd/v1/wfdv1grpc", package wfdv1grpc, as connect-go puts its stubs
// in wfdv1connect. Code that imports only the messages then does not import
// google.golang.org/grpc.
//
// protoc-gen-go-grpc writes the stubs into the Go package of the file that
// declares the service, and has no option to do otherwise. So this plugin
// hands it a rewritten request in which every file to generate that
// declares services is split in two: one file keeps the name, the services
// and their comments, with the stubs' go_package; the other holds
// everything else (the same full names) under the original go_package, and
// the first imports it. The stubs then name the messages through their own
// package. Nothing is changed in what protoc-gen-go-grpc writes.
//
// Output paths follow the Go import path, so run it with paths=import and
// module= (e.g. module=github.com/wfd-dev/wfd/gen with out: gen).
package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/pluginpb"
)

// serviceField is the number of FileDescriptorProto.service, the first
// element of its services' source location paths.
const serviceField = 6

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "protoc-gen-go-grpc-pkg:", err)
		os.Exit(1)
	}
}

func run(plugin []string, in io.Reader, out io.Writer) error {
	if len(plugin) == 0 {
		return errors.New("usage: protoc-gen-go-grpc-pkg PLUGIN [ARG...]")
	}
	raw, err := io.ReadAll(in)
	if err != nil {
		return err
	}
	var req pluginpb.CodeGeneratorRequest
	if err := proto.Unmarshal(raw, &req); err != nil {
		return fmt.Errorf("read request: %w", err)
	}
	if hasMOption(req.GetParameter()) {
		// An M option would override the go_package set here.
		return errors.New("the M options are not supported")
	}
	if err := split(&req); err != nil {
		return err
	}
	raw, err = proto.Marshal(&req)
	if err != nil {
		return err
	}
	cmd := exec.Command(plugin[0], plugin[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(raw), out, os.Stderr
	return cmd.Run()
}

func hasMOption(param string) bool {
	for _, p := range strings.Split(param, ",") {
		if strings.HasPrefix(p, "M") {
			return true
		}
	}
	return false
}

// split rewrites req in place: each file to generate that declares services
// becomes a messages file and a services file (see the package comment).
func split(req *pluginpb.CodeGeneratorRequest) error {
	var files []*descriptorpb.FileDescriptorProto
	moved := map[string]string{} // original name -> messages file name
	for _, f := range req.ProtoFile {
		if len(f.Service) == 0 || !slices.Contains(req.FileToGenerate, f.GetName()) {
			files = append(files, f)
			continue
		}
		stubs, err := stubsPackage(f.GetOptions().GetGoPackage())
		if err != nil {
			return fmt.Errorf("%s: %w", f.GetName(), err)
		}
		msgs := proto.Clone(f).(*descriptorpb.FileDescriptorProto)
		msgs.Name = proto.String(f.GetName() + "~messages")
		msgs.Service = nil
		msgs.SourceCodeInfo = nil

		svc := &descriptorpb.FileDescriptorProto{
			Name:             f.Name,
			Package:          f.Package,
			Dependency:       append(slices.Clone(f.Dependency), msgs.GetName()),
			PublicDependency: f.PublicDependency,
			WeakDependency:   f.WeakDependency,
			Service:          f.Service,
			Options:          proto.Clone(f.GetOptions()).(*descriptorpb.FileOptions),
			Syntax:           f.Syntax,
			Edition:          f.Edition,
		}
		svc.Options.GoPackage = proto.String(stubs)
		// Keep the services' comments: the stubs' doc comments come from them.
		if sci := f.GetSourceCodeInfo(); sci != nil {
			svc.SourceCodeInfo = &descriptorpb.SourceCodeInfo{}
			for _, loc := range sci.Location {
				if len(loc.Path) > 0 && loc.Path[0] == serviceField {
					svc.SourceCodeInfo.Location = append(svc.SourceCodeInfo.Location, loc)
				}
			}
		}
		moved[f.GetName()] = msgs.GetName()
		files = append(files, msgs, svc)
	}
	// Files that import a split file may use its messages, which now live in
	// the messages file: they import both.
	for _, f := range files {
		for _, dep := range f.Dependency {
			if m, ok := moved[dep]; ok && f.GetName() != dep && f.GetName() != m {
				f.Dependency = append(f.Dependency, m)
			}
		}
	}
	req.ProtoFile = files
	return nil
}

// stubsPackage returns the go_package of the stubs for a file whose
// messages have goPackage: "<path>/<name>grpc;<name>grpc".
func stubsPackage(goPackage string) (string, error) {
	importPath, name, ok := strings.Cut(goPackage, ";")
	if importPath == "" {
		return "", errors.New("no go_package option")
	}
	if !ok {
		name = path.Base(importPath)
	}
	name += "grpc"
	return path.Join(importPath, name) + ";" + name, nil
}
