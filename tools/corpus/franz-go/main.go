// Command franz-go writes draft corpus vectors produced by franz-go's own
// encoders (pkg/kmsg AppendTo and the pkg/kgo group balancers).
//
// Usage: go run . <vectors-root>   (writes <root>/franz-go-<kgo version>/)
// The drafts carry name/description/producer/kind/hex/notes; the Java reader
// (tools/corpus/java-reader) fills in canonical/expect/readers afterwards.
package main

import (
	"encoding/hex"
	"fmt"
	"kcp-corpus/vecdraft"
	"os"
	"path/filepath"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type producer = vecdraft.Producer
type draft = vecdraft.Draft

var outDir string

func modVersion(path string) string { return vecdraft.ModVersion(path) }
func emit(d draft)                  { vecdraft.Emit(outDir, d) }
func str(s string) *string          { return vecdraft.Str(s) }

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: franz-go <vectors-root>")
		os.Exit(2)
	}
	kmsgV := modVersion("github.com/twmb/franz-go/pkg/kmsg")
	kgoV := modVersion("github.com/twmb/franz-go")
	outDir = filepath.Join(os.Args[1], "franz-go-"+strings.TrimPrefix(kgoV, "v"))
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		panic(err)
	}
	kmsgProd := func(how string) producer {
		return producer{Implementation: "franz-go/pkg/kmsg", Version: kmsgV, How: how}
	}
	kgoProd := func(how string) producer {
		return producer{Implementation: "franz-go/pkg/kgo", Version: kgoV, How: how}
	}
	n := 0
	put := func(d draft) { emit(d); n++ }

	// ---- ConsumerMemberMetadata.AppendTo at versions 0..4 ----
	type subCase struct {
		suffix, desc string
		build        func(v int16) kmsg.ConsumerMemberMetadata
	}
	subCases := []subCase{
		{"basic", "topics [foo, bar] (unsorted), null userData, owned foo-0, generation 5, rack r1",
			func(v int16) kmsg.ConsumerMemberMetadata {
				m := kmsg.NewConsumerMemberMetadata()
				m.Version = v
				m.Topics = []string{"foo", "bar"}
				m.UserData = nil
				m.OwnedPartitions = []kmsg.ConsumerMemberMetadataOwnedPartition{{Topic: "foo", Partitions: []int32{0}}}
				m.Generation = 5
				m.Rack = str("r1")
				return m
			}},
		{"empty-user-data", "topics [foo], empty (non-null) userData, no owned partitions, generation -1, rack null",
			func(v int16) kmsg.ConsumerMemberMetadata {
				m := kmsg.NewConsumerMemberMetadata()
				m.Version = v
				m.Topics = []string{"foo"}
				m.UserData = []byte{}
				return m
			}},
		{"owned-unsorted", "topics [foo, bar], userData 010203, owned foo:[2,0] then bar:[1] (unsorted), generation 7, rack \"\"",
			func(v int16) kmsg.ConsumerMemberMetadata {
				m := kmsg.NewConsumerMemberMetadata()
				m.Version = v
				m.Topics = []string{"foo", "bar"}
				m.UserData = []byte{1, 2, 3}
				m.OwnedPartitions = []kmsg.ConsumerMemberMetadataOwnedPartition{
					{Topic: "foo", Partitions: []int32{2, 0}}, {Topic: "bar", Partitions: []int32{1}}}
				m.Generation = 7
				m.Rack = str("")
				return m
			}},
	}
	for _, c := range subCases {
		for v := int16(0); v <= 3; v++ {
			m := c.build(v)
			put(draft{
				Name:        fmt.Sprintf("subscription-v%d-%s", v, c.suffix),
				Description: fmt.Sprintf("kmsg ConsumerMemberMetadata Version %d: %s (fields above v%d dropped by the encoder)", v, c.desc, v),
				Producer:    kmsgProd(fmt.Sprintf("(&kmsg.ConsumerMemberMetadata{Version: %d, ...}).AppendTo(nil)", v)),
				Kind:        "subscription",
				Hex:         hex.EncodeToString(m.AppendTo(nil)),
			})
		}
	}
	{
		m := kmsg.NewConsumerMemberMetadata()
		m.Version = 3
		m.Topics = []string{"bar", "foo"}
		m.OwnedPartitions = []kmsg.ConsumerMemberMetadataOwnedPartition{
			{Topic: "bar", Partitions: []int32{1}}, {Topic: "foo", Partitions: []int32{0, 2}}}
		m.Generation = 5
		m.Rack = str("r1")
		put(draft{
			Name:        "subscription-v3-sorted",
			Description: "kmsg ConsumerMemberMetadata Version 3 fed already-sorted input: topics [bar, foo], null userData, owned bar:[1] foo:[0,2], generation 5, rack r1",
			Producer:    kmsgProd("(&kmsg.ConsumerMemberMetadata{Version: 3, ...}).AppendTo(nil)"),
			Kind:        "subscription",
			Hex:         hex.EncodeToString(m.AppendTo(nil)),
		})
		m.Version = 4
		put(draft{
			Name:        "subscription-v4-future-header",
			Description: "kmsg ConsumerMemberMetadata with Version 4 (unknown to kmsg): writes header 4 with the v3 field set",
			Producer:    kmsgProd("(&kmsg.ConsumerMemberMetadata{Version: 4, ...}).AppendTo(nil)"),
			Kind:        "subscription",
			Hex:         hex.EncodeToString(m.AppendTo(nil)),
			Notes:       "kmsg writes whatever Version it is given; fields are gated by >= checks, so Version 4 carries exactly the v3 body.",
		})
	}

	// ---- ConsumerMemberAssignment.AppendTo at versions 0..3 ----
	for v := int16(0); v <= 3; v++ {
		a := kmsg.NewConsumerMemberAssignment()
		a.Version = v
		a.Topics = []kmsg.ConsumerMemberAssignmentTopic{{Topic: "foo", Partitions: []int32{0, 2}}, {Topic: "bar", Partitions: []int32{1}}}
		put(draft{
			Name:        fmt.Sprintf("assignment-v%d-basic", v),
			Description: fmt.Sprintf("kmsg ConsumerMemberAssignment Version %d: foo:[0,2] then bar:[1] (topic order as given), null userData", v),
			Producer:    kmsgProd(fmt.Sprintf("(&kmsg.ConsumerMemberAssignment{Version: %d, ...}).AppendTo(nil)", v)),
			Kind:        "assignment",
			Hex:         hex.EncodeToString(a.AppendTo(nil)),
		})
		a.Topics = nil
		a.UserData = []byte{}
		put(draft{
			Name:        fmt.Sprintf("assignment-v%d-empty", v),
			Description: fmt.Sprintf("kmsg ConsumerMemberAssignment Version %d: no partitions, empty (non-null) userData", v),
			Producer:    kmsgProd(fmt.Sprintf("(&kmsg.ConsumerMemberAssignment{Version: %d, UserData: []byte{}}).AppendTo(nil)", v)),
			Kind:        "assignment",
			Hex:         hex.EncodeToString(a.AppendTo(nil)),
		})
	}
	{
		a := kmsg.NewConsumerMemberAssignment()
		a.Version = 0
		a.Topics = []kmsg.ConsumerMemberAssignmentTopic{{Topic: "foo", Partitions: []int32{0}}, {Topic: "bar", Partitions: []int32{1}}, {Topic: "foo", Partitions: []int32{2}}}
		a.UserData = []byte{1, 2, 3}
		put(draft{
			Name:        "assignment-v0-split-topic",
			Description: "kmsg ConsumerMemberAssignment Version 0 with topic foo split in two entries (foo:[0], bar:[1], foo:[2]) and userData 010203",
			Producer:    kmsgProd("(&kmsg.ConsumerMemberAssignment{Version: 0, ...}).AppendTo(nil)"),
			Kind:        "assignment",
			Hex:         hex.EncodeToString(a.AppendTo(nil)),
			Notes:       "kmsg writes entries exactly as given; Java's serializeAssignment would group foo:[0,2] first.",
		})
	}

	// ---- StickyMemberMetadata (KIP-54 / KIP-341 userData) ----
	{
		s := kmsg.NewStickyMemberMetadata()
		s.CurrentAssignment = []kmsg.StickyMemberMetadataCurrentAssignment{{Topic: "foo", Partitions: []int32{0, 1}}}
		s.Generation = 3
		put(draft{
			Name:        "sticky-user-data-v1",
			Description: "kmsg StickyMemberMetadata foo:[0,1], Generation 3 (written as sticky userData V1)",
			Producer:    kmsgProd("(&kmsg.StickyMemberMetadata{CurrentAssignment: foo:[0,1], Generation: 3}).AppendTo(nil)"),
			Kind:        "sticky_user_data",
			Hex:         hex.EncodeToString(s.AppendTo(nil)),
		})
		s.Generation = -1
		put(draft{
			Name:        "sticky-user-data-v0",
			Description: "kmsg StickyMemberMetadata foo:[0,1], Generation -1 (AppendTo omits the generation: sticky userData V0)",
			Producer:    kmsgProd("(&kmsg.StickyMemberMetadata{CurrentAssignment: foo:[0,1], Generation: -1}).AppendTo(nil)"),
			Kind:        "sticky_user_data",
			Hex:         hex.EncodeToString(s.AppendTo(nil)),
		})
		s.CurrentAssignment = nil
		s.Generation = 0
		put(draft{
			Name:        "sticky-user-data-empty-gen0",
			Description: "kmsg StickyMemberMetadata with no assignment and Generation 0 (8 bytes, as in redpanda's franz-go capture)",
			Producer:    kmsgProd("(&kmsg.StickyMemberMetadata{Generation: 0}).AppendTo(nil)"),
			Kind:        "sticky_user_data",
			Hex:         hex.EncodeToString(s.AppendTo(nil)),
		})
	}

	// ---- kgo group balancers: what a franz-go consumer really sends ----
	interests := []string{"bar", "foo"} // kgo guarantees sorted interests
	current := func() map[string][]int32 { return map[string][]int32{"foo": {0}, "bar": {1}} }
	balancers := []struct {
		name string
		b    kgo.GroupBalancer
		ctor string
	}{
		{"cooperative-sticky", kgo.CooperativeStickyBalancer(), "kgo.CooperativeStickyBalancer()"},
		{"sticky", kgo.StickyBalancer(), "kgo.StickyBalancer()"},
		{"range", kgo.RangeBalancer(), "kgo.RangeBalancer()"},
		{"roundrobin", kgo.RoundRobinBalancer(), "kgo.RoundRobinBalancer()"},
	}
	for _, bal := range balancers {
		meta := bal.b.JoinGroupMetadata(append([]string(nil), interests...), current(), 5)
		put(draft{
			Name:        "kgo-" + bal.name + "-join-metadata",
			Description: "franz-go " + bal.name + " balancer JoinGroup metadata: interests [bar, foo], current assignment foo:[0] bar:[1], generation 5",
			Producer:    kgoProd(bal.ctor + ".JoinGroupMetadata([]string{\"bar\",\"foo\"}, map[string][]int32{\"foo\":{0},\"bar\":{1}}, 5)"),
			Kind:        "subscription",
			Hex:         hex.EncodeToString(meta),
			Notes:       "The rack is not part of JoinGroupMetadata's inputs; the balancer output carries rack null.",
		})
	}
	{
		meta := kgo.CooperativeStickyBalancer().JoinGroupMetadata([]string{"foo"}, map[string][]int32{}, -1)
		put(draft{
			Name:        "kgo-cooperative-sticky-join-metadata-fresh",
			Description: "franz-go cooperative-sticky JoinGroup metadata of a new member: interests [foo], nothing owned, generation -1",
			Producer:    kgoProd("kgo.CooperativeStickyBalancer().JoinGroupMetadata([]string{\"foo\"}, map[string][]int32{}, -1)"),
			Kind:        "subscription",
			Hex:         hex.EncodeToString(meta),
		})
		var parsed kmsg.ConsumerMemberMetadata
		full := kgo.CooperativeStickyBalancer().JoinGroupMetadata(append([]string(nil), interests...), current(), 5)
		if err := parsed.ReadFrom(full); err != nil {
			panic(err)
		}
		put(draft{
			Name:        "kgo-cooperative-sticky-user-data",
			Description: "userData embedded by franz-go's cooperative-sticky balancer (StickyMemberMetadata, bar:[1] foo:[0], generation 5)",
			Producer:    kgoProd("userData of kgo.CooperativeStickyBalancer().JoinGroupMetadata([]string{\"bar\",\"foo\"}, {foo:[0], bar:[1]}, 5)"),
			Kind:        "sticky_user_data",
			Hex:         hex.EncodeToString(parsed.UserData),
			Notes:       "franz-go's cooperative-sticky balancer writes KIP-341 sticky userData, not Java's 4-byte CooperativeStickyAssignor generation.",
		})
	}
	{
		// Leader side: a balance plan turned into SyncGroup assignments.
		members := []kmsg.JoinGroupResponseMember{{MemberID: "m1", ProtocolMetadata: kgo.RangeBalancer().JoinGroupMetadata([]string{"bar", "foo"}, nil, 5)}}
		cb, err := kgo.NewConsumerBalancer(kgo.RangeBalancer().(kgo.ConsumerBalancerBalance), members)
		if err != nil {
			panic(err)
		}
		plan := cb.NewPlan()
		m, _ := cb.MemberAt(0)
		plan.AddPartitions(m, "foo", []int32{2, 0})
		plan.AddPartition(m, "bar", 1)
		sync := plan.IntoSyncAssignment()
		put(draft{
			Name:        "kgo-balance-plan-assignment",
			Description: "franz-go leader assignment from BalancePlan.IntoSyncAssignment: foo:[2,0] and bar:[1] added to one member",
			Producer:    kgoProd("(*kgo.BalancePlan).IntoSyncAssignment() after AddPartitions(m, \"foo\", [2,0]); AddPartition(m, \"bar\", 1)"),
			Kind:        "assignment",
			Hex:         hex.EncodeToString(sync[0].MemberAssignment),
			Notes:       "kgo writes assignment Version 0 with topics and partitions sorted.",
		})
	}
	fmt.Printf("franz-go: wrote %d drafts to %s\n", n, outDir)
}
