// Command sarama-legacy writes draft corpus vectors produced by an old
// Shopify/sarama release (before sarama learnt OwnedPartitions), driven the way
// bsm/sarama-cluster drove it. bsm/sarama-cluster itself is not served by the Go
// module proxy; its Consumer.joinGroup built
//
//	&sarama.ConsumerGroupMemberMetadata{Version: 1, Topics: sorted topics, UserData: config.Group.Member.UserData}
//
// and passed it to (*JoinGroupRequest).AddGroupProtocolMetadata, and its syncGroup
// sent ConsumerGroupMemberAssignment{Version: 1, Topics: map}. Old sarama's encode
// writes only the v0 fields whatever Version says, so the bytes below are exactly
// what sarama-cluster sent.
//
// Usage: go run . <vectors-root>   (writes <root>/shopify-sarama-<version>/)
package main

import (
	"encoding/hex"
	"fmt"
	"kcp-corpus/vecdraft"
	"os"
	"path/filepath"
	"strings"

	"github.com/Shopify/sarama"
)

type producer = vecdraft.Producer
type draft = vecdraft.Draft

var outDir string

func modVersion(path string) string { return vecdraft.ModVersion(path) }
func emit(d draft)                  { vecdraft.Emit(outDir, d) }
func str(s string) *string          { return vecdraft.Str(s) }

func encodeSub(m *sarama.ConsumerGroupMemberMetadata) string {
	req := &sarama.JoinGroupRequest{}
	if err := req.AddGroupProtocolMetadata("range", m); err != nil {
		panic(err)
	}
	return hex.EncodeToString(req.OrderedGroupProtocols[0].Metadata)
}

func encodeAsg(a *sarama.ConsumerGroupMemberAssignment) string {
	req := &sarama.SyncGroupRequest{}
	if err := req.AddGroupAssignmentMember("m1", a); err != nil {
		panic(err)
	}
	return hex.EncodeToString(req.GroupAssignments["m1"])
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: sarama-legacy <vectors-root>")
		os.Exit(2)
	}
	ver := modVersion("github.com/Shopify/sarama")
	outDir = filepath.Join(os.Args[1], "shopify-sarama-"+strings.TrimPrefix(ver, "v"))
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		panic(err)
	}
	prod := func(how string) producer { return producer{Implementation: "Shopify/sarama", Version: ver, How: how} }
	n := 0
	put := func(d draft) { emit(d); n++ }
	const clusterNote = "Reproduces bsm/sarama-cluster (last release v2.1.15), whose Consumer.joinGroup sets Version: 1 on sarama.ConsumerGroupMemberMetadata; sarama releases of that era encode only version, topics and userData, so OwnedPartitions is missing. Run with the real old sarama encoder; sarama-cluster's own module is not available from the Go module proxy, so its one-line struct literal is reproduced here. sarama later tolerated this on decode (PR #2111, fixture groupMemberMetadataV1Bad)."

	put(draft{
		Name:        "sarama-cluster-subscription-v1-no-owned",
		Description: "bsm/sarama-cluster JoinGroup metadata: header v1, sorted topics [bar, foo], null userData (no Group.Member.UserData configured), no OwnedPartitions",
		Producer:    prod("(&sarama.JoinGroupRequest{}).AddGroupProtocolMetadata(\"range\", &sarama.ConsumerGroupMemberMetadata{Version: 1, Topics: {bar, foo}}) as in sarama-cluster Consumer.joinGroup"),
		Kind:        "subscription",
		Hex:         encodeSub(&sarama.ConsumerGroupMemberMetadata{Version: 1, Topics: []string{"bar", "foo"}}),
		Notes:       clusterNote,
	})
	put(draft{
		Name:        "sarama-cluster-subscription-v1-no-owned-user-data",
		Description: "bsm/sarama-cluster JoinGroup metadata with Group.Member.UserData = 010203: header v1, topics [bar, foo], no OwnedPartitions",
		Producer:    prod("(&sarama.JoinGroupRequest{}).AddGroupProtocolMetadata(\"range\", &sarama.ConsumerGroupMemberMetadata{Version: 1, Topics: {bar, foo}, UserData: 010203})"),
		Kind:        "subscription",
		Hex:         encodeSub(&sarama.ConsumerGroupMemberMetadata{Version: 1, Topics: []string{"bar", "foo"}, UserData: []byte{1, 2, 3}}),
		Notes:       clusterNote + " With userData present the trailing bytes a v1 reader expects are still missing.",
	})
	put(draft{
		Name:        "consumer-group-subscription-v0",
		Description: "Shopify/sarama's own ConsumerGroup JoinGroup metadata of that era: Version left at 0, topics [foo, bar], null userData",
		Producer:    prod("(&sarama.JoinGroupRequest{}).AddGroupProtocolMetadata(\"range\", &sarama.ConsumerGroupMemberMetadata{Topics: {foo, bar}}) as in consumerGroup.joinGroupRequest"),
		Kind:        "subscription",
		Hex:         encodeSub(&sarama.ConsumerGroupMemberMetadata{Topics: []string{"foo", "bar"}}),
	})
	seen := map[string]string{}
	for i := 0; i < 10000 && len(seen) < 2; i++ {
		h := encodeAsg(&sarama.ConsumerGroupMemberAssignment{Version: 1, Topics: map[string][]int32{"foo": {0, 2}, "bar": {1}}})
		first := "foo-first"
		if h[12:18] == "000362" {
			first = "bar-first"
		}
		seen[first] = h
	}
	if len(seen) != 2 {
		panic("map order never varied")
	}
	for _, first := range []string{"foo-first", "bar-first"} {
		put(draft{
			Name:        "sarama-cluster-assignment-v1-map-" + first,
			Description: "bsm/sarama-cluster leader assignment: Version 1, Topics map {foo:[0,2], bar:[1]}, null userData; this run iterated the map " + first,
			Producer:    prod("(&sarama.SyncGroupRequest{}).AddGroupAssignmentMember(\"m1\", &sarama.ConsumerGroupMemberAssignment{Version: 1, Topics: {foo:[0,2], bar:[1]}}) as in sarama-cluster Consumer.syncGroup"),
			Kind:        "assignment",
			Hex:         seen[first],
			Notes:       "Assignment v1 has the same body as v0, so this one is well-formed; topic order follows Go map iteration (random per call).",
		})
	}
	fmt.Printf("sarama-legacy: wrote %d drafts to %s\n", n, outDir)
}
