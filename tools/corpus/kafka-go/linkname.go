package main

import (
	_ "unsafe" // for go:linkname

	_ "github.com/segmentio/kafka-go"
)

// groupMetadata mirrors kafka-go's unexported groupMetadata (joingroup.go):
// same fields, same order, same types.
type groupMetadata struct {
	Version  int16
	Topics   []string
	UserData []byte
}

// groupAssignment mirrors kafka-go's unexported groupAssignment (syncgroup.go).
type groupAssignment struct {
	Version  int16
	Topics   map[string][]int32
	UserData []byte
}

// cgMetadataBytes is kafka-go's groupMetadata.bytes, the encoder
// ConsumerGroup.makeJoinGroupRequestV1 uses for JoinGroup protocol metadata.
//
//go:linkname cgMetadataBytes github.com/segmentio/kafka-go.groupMetadata.bytes
func cgMetadataBytes(m groupMetadata) []byte

// cgAssignmentBytes is kafka-go's groupAssignment.bytes, the encoder
// ConsumerGroup.makeSyncGroupRequestV0 uses for member assignments.
//
//go:linkname cgAssignmentBytes github.com/segmentio/kafka-go.groupAssignment.bytes
func cgAssignmentBytes(a groupAssignment) []byte
