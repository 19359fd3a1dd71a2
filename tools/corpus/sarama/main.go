// Command sarama writes draft corpus vectors produced by IBM/sarama's own
// encoders, reached through its public API:
// (*JoinGroupRequest).AddGroupProtocolMetadata and
// (*SyncGroupRequest).AddGroupAssignmentMember both call sarama's encode() on
// ConsumerGroupMemberMetadata / ConsumerGroupMemberAssignment and keep the bytes.
//
// Usage: go run . <vectors-root>   (writes <root>/sarama-<version>/)
package main

import (
	"encoding/hex"
	"fmt"
	"kcp-corpus/vecdraft"
	"os"
	"path/filepath"
	"strings"

	"github.com/IBM/sarama"
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
	return hex.EncodeToString(req.GroupAssignments[0].Assignment)
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: sarama <vectors-root>")
		os.Exit(2)
	}
	ver := modVersion("github.com/IBM/sarama")
	outDir = filepath.Join(os.Args[1], "sarama-"+strings.TrimPrefix(ver, "v"))
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		panic(err)
	}
	prod := func(how string) producer { return producer{Implementation: "IBM/sarama", Version: ver, How: how} }
	n := 0
	put := func(d draft) { emit(d); n++ }

	type subCase struct {
		suffix, desc string
		build        func(v int16) *sarama.ConsumerGroupMemberMetadata
	}
	subCases := []subCase{
		{"basic", "topics [foo, bar] (unsorted), null userData, owned foo-0, generation 5, rack r1",
			func(v int16) *sarama.ConsumerGroupMemberMetadata {
				return &sarama.ConsumerGroupMemberMetadata{Version: v, Topics: []string{"foo", "bar"},
					OwnedPartitions: []*sarama.OwnedPartition{{Topic: "foo", Partitions: []int32{0}}},
					GenerationID:    5, RackID: str("r1")}
			}},
		{"empty-user-data", "topics [foo], empty (non-null) userData, no owned partitions, generation -1, rack null",
			func(v int16) *sarama.ConsumerGroupMemberMetadata {
				return &sarama.ConsumerGroupMemberMetadata{Version: v, Topics: []string{"foo"}, UserData: []byte{}, GenerationID: -1}
			}},
		{"owned-unsorted", "topics [foo, bar], userData 010203, owned foo:[2,0] then bar:[1] (unsorted), generation 7, rack \"\"",
			func(v int16) *sarama.ConsumerGroupMemberMetadata {
				return &sarama.ConsumerGroupMemberMetadata{Version: v, Topics: []string{"foo", "bar"}, UserData: []byte{1, 2, 3},
					OwnedPartitions: []*sarama.OwnedPartition{{Topic: "foo", Partitions: []int32{2, 0}}, {Topic: "bar", Partitions: []int32{1}}},
					GenerationID:    7, RackID: str("")}
			}},
		{"zero-value-generation", "topics [foo], nil userData, nil OwnedPartitions, GenerationID left at Go zero value 0, RackID nil",
			func(v int16) *sarama.ConsumerGroupMemberMetadata {
				return &sarama.ConsumerGroupMemberMetadata{Version: v, Topics: []string{"foo"}}
			}},
	}
	for _, c := range subCases {
		for v := int16(0); v <= 3; v++ {
			put(draft{
				Name:        fmt.Sprintf("subscription-v%d-%s", v, c.suffix),
				Description: fmt.Sprintf("sarama ConsumerGroupMemberMetadata Version %d: %s (fields above v%d dropped by the encoder)", v, c.desc, v),
				Producer:    prod(fmt.Sprintf("(&sarama.JoinGroupRequest{}).AddGroupProtocolMetadata(\"range\", &sarama.ConsumerGroupMemberMetadata{Version: %d, ...})", v)),
				Kind:        "subscription",
				Hex:         encodeSub(c.build(v)),
				Notes:       "sarama's consumer group itself writes Version 0, 1 or 2 (by configured broker version: <2.4 -> 0, >=2.4 -> 1, >=3.2 -> 2), never 3; Version 3 here is the encoder called directly.",
			})
		}
	}

	// Assignments. Topics is a Go map, so the order of topics on the wire follows
	// map iteration order and differs between runs; encode until both orders of
	// the two-topic map have been seen and keep one vector of each.
	for v := int16(0); v <= 3; v++ {
		seen := map[string]string{}
		for i := 0; i < 10000 && len(seen) < 2; i++ {
			h := encodeAsg(&sarama.ConsumerGroupMemberAssignment{Version: v, Topics: map[string][]int32{"foo": {0, 2}, "bar": {1}}})
			first := "foo-first"
			if h[12:18] == "000362" { // first topic name "bar"
				first = "bar-first"
			}
			seen[first] = h
		}
		if len(seen) != 2 {
			panic("map order never varied")
		}
		for _, first := range []string{"foo-first", "bar-first"} {
			put(draft{
				Name:        fmt.Sprintf("assignment-v%d-map-%s", v, first),
				Description: fmt.Sprintf("sarama ConsumerGroupMemberAssignment Version %d: Topics map {foo:[0,2], bar:[1]}, null userData; this run iterated the map %s", v, first),
				Producer:    prod(fmt.Sprintf("(&sarama.SyncGroupRequest{}).AddGroupAssignmentMember(\"m1\", &sarama.ConsumerGroupMemberAssignment{Version: %d, Topics: {foo:[0,2], bar:[1]}})", v)),
				Kind:        "assignment",
				Hex:         seen[first],
				Notes:       "Topic order follows Go map iteration and is random per call: the same assignment encodes to either byte string. sarama's consumer group sends assignment Version 0.",
			})
		}
		put(draft{
			Name:        fmt.Sprintf("assignment-v%d-empty", v),
			Description: fmt.Sprintf("sarama ConsumerGroupMemberAssignment Version %d: empty Topics map, empty (non-null) userData", v),
			Producer:    prod(fmt.Sprintf("(&sarama.SyncGroupRequest{}).AddGroupAssignmentMember(\"m1\", &sarama.ConsumerGroupMemberAssignment{Version: %d, Topics: {}, UserData: []byte{}})", v)),
			Kind:        "assignment",
			Hex:         encodeAsg(&sarama.ConsumerGroupMemberAssignment{Version: v, Topics: map[string][]int32{}, UserData: []byte{}}),
		})
	}
	put(draft{
		Name:        "assignment-v0-nil-topics-user-data",
		Description: "sarama ConsumerGroupMemberAssignment Version 0: nil Topics map, userData 010203",
		Producer:    prod("(&sarama.SyncGroupRequest{}).AddGroupAssignmentMember(\"m1\", &sarama.ConsumerGroupMemberAssignment{Version: 0, UserData: []byte{1,2,3}})"),
		Kind:        "assignment",
		Hex:         encodeAsg(&sarama.ConsumerGroupMemberAssignment{Version: 0, UserData: []byte{1, 2, 3}}),
	})

	// Sticky assignor userData (StickyAssignorUserDataV1) from the public BalanceStrategy API.
	{
		data, err := sarama.NewBalanceStrategySticky().AssignmentData("m1", map[string][]int32{"foo": {0, 1}}, 3)
		if err != nil {
			panic(err)
		}
		put(draft{
			Name:        "sticky-user-data-v1",
			Description: "sarama sticky BalanceStrategy AssignmentData: foo:[0,1], generation 3 (StickyAssignorUserDataV1)",
			Producer:    prod("sarama.NewBalanceStrategySticky().AssignmentData(\"m1\", map[string][]int32{\"foo\": {0, 1}}, 3)"),
			Kind:        "sticky_user_data",
			Hex:         hex.EncodeToString(data),
		})
		data, err = sarama.NewBalanceStrategySticky().AssignmentData("m1", map[string][]int32{}, -1)
		if err != nil {
			panic(err)
		}
		put(draft{
			Name:        "sticky-user-data-v1-empty",
			Description: "sarama sticky BalanceStrategy AssignmentData: no partitions, generation -1",
			Producer:    prod("sarama.NewBalanceStrategySticky().AssignmentData(\"m1\", map[string][]int32{}, -1)"),
			Kind:        "sticky_user_data",
			Hex:         hex.EncodeToString(data),
		})
	}
	// Cooperative-sticky subscription userData (Java's CooperativeStickyAssignor format: one int32 generation).
	{
		coop := sarama.NewBalanceStrategyCooperativeSticky()
		ud, err := coop.(sarama.SubscriptionUserDataBalanceStrategy).SubscriptionUserData([]string{"foo"})
		if err != nil {
			panic(err)
		}
		put(draft{
			Name:        "cooperative-sticky-user-data-fresh",
			Description: "sarama cooperative-sticky strategy SubscriptionUserData of a new member (no assignment yet)",
			Producer:    prod("sarama.NewBalanceStrategyCooperativeSticky().(sarama.SubscriptionUserDataBalanceStrategy).SubscriptionUserData([]string{\"foo\"})"),
			Kind:        "cooperative_sticky_user_data",
			Hex:         hex.EncodeToString(ud),
		})
		coop.(sarama.OnAssignmentBalanceStrategy).OnAssignment(&sarama.ConsumerGroupMemberAssignment{Topics: map[string][]int32{"foo": {0}}}, 10)
		ud, err = coop.(sarama.SubscriptionUserDataBalanceStrategy).SubscriptionUserData([]string{"foo"})
		if err != nil {
			panic(err)
		}
		put(draft{
			Name:        "cooperative-sticky-user-data-gen10",
			Description: "sarama cooperative-sticky strategy SubscriptionUserData after OnAssignment(..., generation 10)",
			Producer:    prod("s := sarama.NewBalanceStrategyCooperativeSticky(); s.(OnAssignmentBalanceStrategy).OnAssignment(<foo:[0]>, 10); s.(SubscriptionUserDataBalanceStrategy).SubscriptionUserData([]string{\"foo\"})"),
			Kind:        "cooperative_sticky_user_data",
			Hex:         hex.EncodeToString(ud),
		})
	}
	fmt.Printf("sarama: wrote %d drafts to %s\n", n, outDir)
}
