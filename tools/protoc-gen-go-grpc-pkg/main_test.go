package main

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/pluginpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// request is what buf sends for wfd/v1: its files to generate and, before
// them, everything they import.
func request(param string) *pluginpb.CodeGeneratorRequest {
	req := &pluginpb.CodeGeneratorRequest{Parameter: proto.String(param)}
	seen := map[string]bool{}
	var add func(f protoreflect.FileDescriptor)
	add = func(f protoreflect.FileDescriptor) {
		if seen[f.Path()] {
			return
		}
		seen[f.Path()] = true
		for i := range f.Imports().Len() {
			add(f.Imports().Get(i).FileDescriptor)
		}
		fd := protodesc.ToFileDescriptorProto(f)
		if f.Path() == "wfd/v1/service.proto" {
			// Compiled-in descriptors carry no comments; buf's do.
			fd.SourceCodeInfo = &descriptorpb.SourceCodeInfo{Location: []*descriptorpb.SourceCodeInfo_Location{
				{Path: []int32{serviceField, 0}, Span: []int32{1, 0, 9}, LeadingComments: proto.String(" the service\n")},
				{Path: []int32{4, 0}, Span: []int32{2, 0, 9}, LeadingComments: proto.String(" a message\n")},
			}}
		}
		if strings.HasPrefix(f.Path(), "wfd/") {
			req.FileToGenerate = append(req.FileToGenerate, f.Path())
		}
		req.ProtoFile = append(req.ProtoFile, fd)
	}
	add(wfdv1.File_wfd_v1_service_proto)
	return req
}

// passedOn runs the plugin with cat in place of protoc-gen-go-grpc, so what
// comes out is the request protoc-gen-go-grpc would get.
func passedOn(t *testing.T, req *pluginpb.CodeGeneratorRequest) (*pluginpb.CodeGeneratorRequest, error) {
	t.Helper()
	cat, err := exec.LookPath("cat")
	if err != nil {
		t.Skip("no cat command")
	}
	in, err := proto.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run([]string{cat}, bytes.NewReader(in), &out); err != nil {
		return nil, err
	}
	var got pluginpb.CodeGeneratorRequest
	if err := proto.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	return &got, nil
}

func TestSplitsServiceFiles(t *testing.T) {
	got, err := passedOn(t, request("module=github.com/wfd-dev/wfd/gen"))
	if err != nil {
		t.Fatal(err)
	}
	if got.GetParameter() != "module=github.com/wfd-dev/wfd/gen" {
		t.Errorf("parameter = %q", got.GetParameter())
	}
	// Still a valid set of files: no full name declared twice, every type
	// a method names is imported.
	if _, err := protodesc.NewFiles(&descriptorpb.FileDescriptorSet{File: got.ProtoFile}); err != nil {
		t.Fatalf("rewritten files do not build: %v", err)
	}
	byName := map[string]*descriptorpb.FileDescriptorProto{}
	var names []string
	for _, f := range got.ProtoFile {
		byName[f.GetName()] = f
		names = append(names, f.GetName())
	}
	var want []string
	for _, f := range request("").ProtoFile {
		if f.GetName() == "wfd/v1/service.proto" {
			want = append(want, "wfd/v1/service.proto~messages")
		}
		want = append(want, f.GetName())
	}
	if !slices.Equal(names, want) {
		t.Fatalf("files %v, want %v", names, want)
	}

	svc, msgs := byName["wfd/v1/service.proto"], byName["wfd/v1/service.proto~messages"]
	if len(svc.Service) != 1 || len(svc.MessageType) != 0 || len(svc.EnumType) != 0 ||
		svc.GetOptions().GetGoPackage() != "github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1grpc;wfdv1grpc" ||
		svc.GetPackage() != "wfd.v1" || svc.Dependency[len(svc.Dependency)-1] != msgs.GetName() {
		t.Errorf("services file: %v", svc)
	}
	if locs := svc.GetSourceCodeInfo().GetLocation(); len(locs) != 1 || locs[0].GetLeadingComments() != " the service\n" {
		t.Errorf("services file comments: %v, want the service's only", locs)
	}
	orig := protodesc.ToFileDescriptorProto(wfdv1.File_wfd_v1_service_proto)
	if len(msgs.Service) != 0 || len(msgs.MessageType) != len(orig.MessageType) ||
		msgs.GetOptions().GetGoPackage() != orig.GetOptions().GetGoPackage() || msgs.GetPackage() != "wfd.v1" {
		t.Errorf("messages file: %v", msgs)
	}
	if !proto.Equal(byName["wfd/v1/handler.proto"], protodesc.ToFileDescriptorProto(wfdv1.File_wfd_v1_handler_proto)) {
		t.Error("a file without services changed")
	}
}

func TestRefusesMOptions(t *testing.T) {
	_, err := passedOn(t, request("module=x,Mwfd/v1/service.proto=example.com/x"))
	if err == nil || !strings.Contains(err.Error(), "M options") {
		t.Fatalf("err = %v, want M options refused", err)
	}
}
