// Command kafka-go writes draft corpus vectors produced by segmentio/kafka-go.
//
// Two encoders exist in kafka-go:
//   - the public protocol package (protocol.Marshal of consumer.Subscription /
//     consumer.Assignment), used by kafka.Client.JoinGroup / SyncGroup;
//   - the unexported groupMetadata / groupAssignment types used by
//     kafka.ConsumerGroup (and kafka.Reader with a GroupID). Their bytes()
//     methods are what ConsumerGroup puts on the wire; they are reached here with
//     //go:linkname (see linkname.go), calling the module's compiled code.
//
// Usage: go run . <vectors-root>   (writes <root>/kafka-go-<version>/)
package main

import (
	"encoding/hex"
	"fmt"
	"kcp-corpus/vecdraft"
	"os"
	"path/filepath"
	"strings"

	kafka "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/consumer"
)

type producer = vecdraft.Producer
type draft = vecdraft.Draft

var outDir string

func modVersion(path string) string { return vecdraft.ModVersion(path) }
func emit(d draft)                  { vecdraft.Emit(outDir, d) }
func str(s string) *string          { return vecdraft.Str(s) }

func marshal(v int16, x interface{}) string {
	b, err := protocol.Marshal(v, x)
	if err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: kafka-go <vectors-root>")
		os.Exit(2)
	}
	ver := modVersion("github.com/segmentio/kafka-go")
	outDir = filepath.Join(os.Args[1], "kafka-go-"+strings.TrimPrefix(ver, "v"))
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		panic(err)
	}
	prod := func(how string) producer {
		return producer{Implementation: "segmentio/kafka-go", Version: ver, How: how}
	}
	n := 0
	put := func(d draft) { emit(d); n++ }

	// ---- ConsumerGroup path (kafka.Reader with GroupID, kafka.ConsumerGroup) ----
	const cgNote = "kafka-go issue #1156: ConsumerGroup.makeJoinGroupRequestV1 builds groupMetadata{Version: 1, Topics, UserData}, whose writeTo writes only the v0 fields, so the header says 1 but OwnedPartitions is missing. Produced by the module's own groupMetadata.bytes (reached via go:linkname); the same bytes a kafka.Reader/ConsumerGroup sends."
	rangeUD, _ := kafka.RangeGroupBalancer{}.UserData()
	put(draft{
		Name:        "consumergroup-subscription-v1-no-owned",
		Description: "kafka-go ConsumerGroup JoinGroup metadata with the range balancer: header v1, topics [foo, bar], null userData, no OwnedPartitions array (defect #1156)",
		Producer:    prod("groupMetadata{Version: 1, Topics: {foo, bar}, UserData: kafka.RangeGroupBalancer{}.UserData()}.bytes() as in ConsumerGroup.makeJoinGroupRequestV1"),
		Kind:        "subscription",
		Hex:         hex.EncodeToString(cgMetadataBytes(groupMetadata{Version: 1, Topics: []string{"foo", "bar"}, UserData: rangeUD})),
		Notes:       cgNote,
	})
	rackUD, _ := kafka.RackAffinityGroupBalancer{Rack: "r1"}.UserData()
	put(draft{
		Name:        "consumergroup-subscription-v1-no-owned-rack-affinity",
		Description: "kafka-go ConsumerGroup JoinGroup metadata with RackAffinityGroupBalancer{Rack: r1}: header v1, topics [foo], userData = the rack string bytes, no OwnedPartitions (defect #1156)",
		Producer:    prod("groupMetadata{Version: 1, Topics: {foo}, UserData: kafka.RackAffinityGroupBalancer{Rack: \"r1\"}.UserData()}.bytes() as in ConsumerGroup.makeJoinGroupRequestV1"),
		Kind:        "subscription",
		Hex:         hex.EncodeToString(cgMetadataBytes(groupMetadata{Version: 1, Topics: []string{"foo"}, UserData: rackUD})),
		Notes:       cgNote + " The rack-affinity balancer carries the rack as raw userData bytes, not in the v3 RackId field.",
	})
	// Assignments from the ConsumerGroup leader: Version 1, Topics is a Go map.
	seen := map[string]string{}
	for i := 0; i < 10000 && len(seen) < 2; i++ {
		h := hex.EncodeToString(cgAssignmentBytes(groupAssignment{Version: 1, Topics: map[string][]int32{"foo": {0, 2}, "bar": {1}}}))
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
			Name:        "consumergroup-assignment-v1-map-" + first,
			Description: "kafka-go ConsumerGroup leader assignment: Version 1, Topics map {foo:[0,2], bar:[1]}, null userData; this run iterated the map " + first,
			Producer:    prod("groupAssignment{Version: 1, Topics: {foo:[0,2], bar:[1]}}.bytes() as in ConsumerGroup.makeSyncGroupRequestV0"),
			Kind:        "assignment",
			Hex:         seen[first],
			Notes:       "Topic order follows Go map iteration (random per call). Produced by the module's own groupAssignment.bytes reached via go:linkname.",
		})
	}
	put(draft{
		Name:        "consumergroup-assignment-v1-empty",
		Description: "kafka-go ConsumerGroup leader assignment for a member that gets nothing: Version 1, empty Topics map, null userData",
		Producer:    prod("groupAssignment{Version: 1, Topics: {}}.bytes() as in ConsumerGroup.makeSyncGroupRequestV0"),
		Kind:        "assignment",
		Hex:         hex.EncodeToString(cgAssignmentBytes(groupAssignment{Version: 1, Topics: map[string][]int32{}})),
	})

	// ---- public protocol package (kafka.Client.JoinGroup / SyncGroup) ----
	for v := int16(0); v <= 1; v++ {
		put(draft{
			Name:        fmt.Sprintf("protocol-subscription-v%d-basic", v),
			Description: fmt.Sprintf("kafka-go protocol.Marshal(%d, consumer.Subscription{Version: %d}): topics [foo, bar], null userData, owned foo-0", v, v),
			Producer:    prod(fmt.Sprintf("protocol.Marshal(%d, consumer.Subscription{Version: %d, Topics: {foo, bar}, OwnedPartitions: {foo:[0]}})", v, v)),
			Kind:        "subscription",
			Hex: marshal(v, consumer.Subscription{Version: v, Topics: []string{"foo", "bar"},
				OwnedPartitions: []consumer.TopicPartition{{Topic: "foo", Partitions: []int32{0}}}}),
			Notes: "kafka.Client.JoinGroup always uses consumer.MaxVersionSupported = 1.",
		})
		put(draft{
			Name:        fmt.Sprintf("protocol-subscription-v%d-empty-user-data", v),
			Description: fmt.Sprintf("kafka-go protocol.Marshal(%d, consumer.Subscription{Version: %d}): topics [foo], empty (non-null) userData, no owned", v, v),
			Producer:    prod(fmt.Sprintf("protocol.Marshal(%d, consumer.Subscription{Version: %d, Topics: {foo}, UserData: []byte{}})", v, v)),
			Kind:        "subscription",
			Hex:         marshal(v, consumer.Subscription{Version: v, Topics: []string{"foo"}, UserData: []byte{}}),
		})
		put(draft{
			Name:        fmt.Sprintf("protocol-assignment-v%d-basic", v),
			Description: fmt.Sprintf("kafka-go protocol.Marshal(%d, consumer.Assignment{Version: %d}): foo:[0,2] then bar:[1], null userData", v, v),
			Producer:    prod(fmt.Sprintf("protocol.Marshal(%d, consumer.Assignment{Version: %d, AssignedPartitions: {foo:[0,2]}, {bar:[1]}})", v, v)),
			Kind:        "assignment",
			Hex: marshal(v, consumer.Assignment{Version: v, AssignedPartitions: []consumer.TopicPartition{
				{Topic: "foo", Partitions: []int32{0, 2}}, {Topic: "bar", Partitions: []int32{1}}}}),
		})
	}
	put(draft{
		Name:        "protocol-subscription-v1-header-v3",
		Description: "kafka-go protocol.Marshal(1, consumer.Subscription{Version: 3}): header 3 but only the v1 field set (the struct's Version is written verbatim, the layout follows the Marshal version)",
		Producer:    prod("protocol.Marshal(1, consumer.Subscription{Version: 3, Topics: {foo}, OwnedPartitions: {foo:[0]}})"),
		Kind:        "subscription",
		Hex: marshal(1, consumer.Subscription{Version: 3, Topics: []string{"foo"},
			OwnedPartitions: []consumer.TopicPartition{{Topic: "foo", Partitions: []int32{0}}}}),
		Notes: "Caller misuse rather than a kafka-go default: the Version field and the Marshal version are independent, so a short v3 payload results when they disagree.",
	})
	fmt.Printf("kafka-go: wrote %d drafts to %s\n", n, outDir)
}
