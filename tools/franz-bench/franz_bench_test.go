// Package franzbench times franz-go's sticky balancers through franz-go's public API only
// (kgo.StickyBalancer / kgo.CooperativeStickyBalancer -> MemberBalancer -> Balance), on the shapes of
// kafka-consumer-protocol issue 3 and on the shapes of franz-go's own BenchmarkLarge / BenchmarkJava.
// Member metadata is what a franz-go client sends: GroupBalancer.JoinGroupMetadata(topics, owned, generation).
//
// The timed operation is Balance(topics) on an already-built member balancer (metadata decoding is done once,
// outside the loop), which is the closest match to Java's ConsumerPartitionAssignor.assign(Cluster, GroupSubscription)
// on pre-decoded subscriptions. Rack-aware balancing is not reachable through the public API without a live
// client (the balancer gets partition racks from the client's metadata cache), so no rack variants are run.
package franzbench

import (
	"fmt"
	"math/rand"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type member struct {
	id     string
	topics []string
}

type shape struct {
	topics  map[string]int32
	members []member
}

func topicList(prefix string, n int) []string {
	l := make([]string, n)
	for i := range l {
		l[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return l
}

// Issue shapes. A: 500 topics x 2000 partitions, 2000 members, uniform. B: as A, last member on topic0 only.
// C: 100 topics x 200 partitions, 500 members, every 4th member on the first 50 topics, the others on the last 50.
func issueShape(name string) shape {
	s := shape{topics: map[string]int32{}}
	switch name {
	case "A", "B":
		all := topicList("topic", 500)
		for _, t := range all {
			s.topics[t] = 2000
		}
		for i := 0; i < 2000; i++ {
			ts := all
			if name == "B" && i == 1999 {
				ts = all[:1]
			}
			s.members = append(s.members, member{fmt.Sprintf("consumer%d", i), ts})
		}
	case "C":
		all := topicList("topic", 100)
		for _, t := range all {
			s.topics[t] = 200
		}
		for i := 0; i < 500; i++ {
			ts := all[50:]
			if i%4 == 0 {
				ts = all[:50]
			}
			s.members = append(s.members, member{fmt.Sprintf("consumer%d", i), ts})
		}
	default:
		panic(name)
	}
	return s
}

// franz-go's BenchmarkLarge input: 100 members on 100 topics with rand.Intn(500) partitions each
// (math/rand seeded with 0); "imbalanced" adds a member subscribed to topic0 only.
func franzLarge(imbalanced bool) shape {
	rng := rand.New(rand.NewSource(0))
	s := shape{topics: map[string]int32{}}
	all := topicList("topic", 100)
	for _, t := range all {
		s.topics[t] = int32(rng.Intn(200 * 5 / 2))
	}
	for i := 0; i < 100; i++ {
		s.members = append(s.members, member{fmt.Sprintf("consumer%d", i), all})
	}
	if imbalanced {
		s.members = append(s.members, member{"imbalance", all[:1]})
	}
	return s
}

// franz-go's BenchmarkJava inputs: topics t0..t{n-1} with p partitions each, c members c0..; imbalanced adds
// one more member on t0 only.
func franzJava(topics, partitions, consumers int, imbalanced bool) shape {
	s := shape{topics: map[string]int32{}}
	all := topicList("t", topics)
	for _, t := range all {
		s.topics[t] = int32(partitions)
	}
	for i := 0; i < consumers; i++ {
		s.members = append(s.members, member{fmt.Sprintf("c%d", i), all})
	}
	if imbalanced {
		s.members = append(s.members, member{fmt.Sprintf("c%d", consumers), all[:1]})
	}
	return s
}

// joinMembers builds the JoinGroup response members; owned[id] (nil map: nobody owns anything) is sent at
// `generation` through the balancer's own JoinGroupMetadata, members without an entry are new (generation -1).
func joinMembers(bal kgo.GroupBalancer, s shape, owned map[string]map[string][]int32, generation int32) []kmsg.JoinGroupResponseMember {
	out := make([]kmsg.JoinGroupResponseMember, 0, len(s.members))
	for _, m := range s.members {
		cur, ok := owned[m.id]
		gen := int32(-1)
		if ok {
			gen = generation
		}
		jm := kmsg.NewJoinGroupResponseMember()
		jm.MemberID = m.id
		jm.ProtocolMetadata = bal.JoinGroupMetadata(m.topics, cur, gen)
		out = append(out, jm)
	}
	return out
}

func memberBalancer(tb testing.TB, bal kgo.GroupBalancer, members []kmsg.JoinGroupResponseMember) kgo.GroupMemberBalancer {
	mb, _, err := bal.MemberBalancer(members)
	if err != nil {
		tb.Fatalf("MemberBalancer: %v", err)
	}
	return mb
}

// balance calls BalanceOrError when the member balancer has it (kgo's ConsumerBalancer does; its plain
// Balance panics by design), as the kgo client itself does.
func balance(tb testing.TB, mb kgo.GroupMemberBalancer, topics map[string]int32) kgo.IntoSyncAssignment {
	if me, ok := mb.(kgo.GroupMemberBalancerOrError); ok {
		into, err := me.BalanceOrError(topics)
		if err != nil {
			tb.Fatalf("BalanceOrError: %v", err)
		}
		return into
	}
	return mb.Balance(topics)
}

func plan(tb testing.TB, bal kgo.GroupBalancer, s shape, owned map[string]map[string][]int32, generation int32) map[string]map[string][]int32 {
	mb := memberBalancer(tb, bal, joinMembers(bal, s, owned, generation))
	p, ok := balance(tb, mb, s.topics).(*kgo.BalancePlan)
	if !ok {
		tb.Fatalf("Balance did not return a *kgo.BalancePlan")
	}
	return p.AsMemberIDMap()
}

// previous: the balancer's own first plan; every member owns its share at generation 1 except `newMember`.
func previous(tb testing.TB, bal kgo.GroupBalancer, s shape, newMember string) map[string]map[string][]int32 {
	first := plan(tb, bal, s, nil, 1)
	delete(first, newMember)
	for _, m := range s.members {
		if _, ok := first[m.id]; !ok && m.id != newMember {
			first[m.id] = map[string][]int32{}
		}
	}
	return first
}

var balancers = []struct {
	name string
	bal  func() kgo.GroupBalancer
}{
	{"sticky", kgo.StickyBalancer},
	{"cooperative-sticky", kgo.CooperativeStickyBalancer},
}

func runBalance(b *testing.B, bal kgo.GroupBalancer, s shape, members []kmsg.JoinGroupResponseMember) {
	mb := memberBalancer(b, bal, members)
	b.ReportAllocs()
	b.ResetTimer()
	c0 := processCPU()
	for i := 0; i < b.N; i++ {
		balance(b, mb, s.topics)
	}
	// process CPU time (user+system, all threads incl. GC): less sensitive than ns/op to other load on a
	// shared machine
	b.ReportMetric(float64((processCPU()-c0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkIssue: shapes A, B, C of the issue; first = nobody owns anything, reassign = every member owns the
// same balancer's first plan at generation 1 except the first member, which is new.
func BenchmarkIssue(b *testing.B) {
	for _, name := range []string{"A", "B", "C"} {
		s := issueShape(name)
		for _, bl := range balancers {
			bal := bl.bal()
			b.Run(fmt.Sprintf("%s/first/%s", name, bl.name), func(b *testing.B) {
				runBalance(b, bal, s, joinMembers(bal, s, nil, 1))
			})
			b.Run(fmt.Sprintf("%s/reassign/%s", name, bl.name), func(b *testing.B) {
				prev := previous(b, bal, s, s.members[0].id)
				runBalance(b, bal, s, joinMembers(bal, s, prev, 1))
			})
		}
	}
}

// BenchmarkFranzLarge mirrors franz-go's BenchmarkLarge (fresh, existing, imbalanced, existing_imbalanced;
// "existing" drops consumer0 and gives the others their previous plan at generation 1).
func BenchmarkFranzLarge(b *testing.B) {
	for _, bl := range balancers {
		bal := bl.bal()
		for _, c := range []struct {
			name       string
			imbalanced bool
			existing   bool
		}{
			{"fresh", false, false}, {"existing", false, true},
			{"imbalanced", true, false}, {"existing_imbalanced", true, true},
		} {
			s := franzLarge(c.imbalanced)
			b.Run(fmt.Sprintf("%s/%s", c.name, bl.name), func(b *testing.B) {
				if !c.existing {
					runBalance(b, bal, s, joinMembers(bal, s, nil, 1))
					return
				}
				prev := plan(b, bal, s, nil, 1)
				// franz-go's version keeps only consumer0..99 with their plans, then drops consumer0
				// (the "imbalance" member leaves too).
				s2 := shape{topics: s.topics}
				for _, m := range s.members[1:] {
					if m.id != "imbalance" {
						s2.members = append(s2.members, m)
					}
				}
				runBalance(b, bal, s2, joinMembers(bal, s2, prev, 1))
			})
		}
	}
}

// BenchmarkFranzJava mirrors franz-go's BenchmarkJava shapes (all first assignments, no racks).
func BenchmarkFranzJava(b *testing.B) {
	for _, c := range []struct {
		name                        string
		topics, partitions, members int
		imbalanced                  bool
	}{
		{"large", 500, 2000, 2000, false}, {"large_imbalance", 500, 2000, 2000, true},
		{"medium", 50, 1000, 1000, false}, {"medium_imbalance", 50, 1000, 1000, true},
		{"small", 50, 800, 800, false}, {"small_imbalance", 50, 800, 800, true},
	} {
		s := franzJava(c.topics, c.partitions, c.members, c.imbalanced)
		for _, bl := range balancers {
			bal := bl.bal()
			b.Run(fmt.Sprintf("%s/%s", c.name, bl.name), func(b *testing.B) {
				runBalance(b, bal, s, joinMembers(bal, s, nil, 1))
			})
		}
	}
}

// TestPlansAreValid checks the harness itself on small versions of the shapes: every partition of every topic
// is assigned exactly once, only to members subscribed to its topic, and (uniform shapes) counts differ by <= 1.
func TestPlansAreValid(t *testing.T) {
	small := map[string]shape{
		"uniform": franzJava(5, 40, 12, false),
		"imbal":   franzJava(5, 40, 12, true),
		"large":   franzLarge(true),
	}
	names := make([]string, 0, len(small))
	for n := range small {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s := small[n]
		for _, bl := range balancers {
			bal := bl.bal()
			for _, reassign := range []bool{false, true} {
				var owned map[string]map[string][]int32
				if reassign {
					owned = previous(t, bal, s, s.members[0].id)
				}
				p := plan(t, bal, s, owned, 1)
				subs := map[string]map[string]bool{}
				for _, m := range s.members {
					subs[m.id] = map[string]bool{}
					for _, tp := range m.topics {
						subs[m.id][tp] = true
					}
				}
				seen := map[string]int{}
				min, max := int(^uint(0)>>1), 0
				for mid, ts := range p {
					cnt := 0
					for topic, ps := range ts {
						if !subs[mid][topic] {
							t.Errorf("%s/%s: %s got %s but is not subscribed", n, bl.name, mid, topic)
						}
						for _, pt := range ps {
							seen[fmt.Sprintf("%s-%d", topic, pt)]++
							cnt++
						}
					}
					if cnt < min {
						min = cnt
					}
					if cnt > max {
						max = cnt
					}
				}
				total := 0
				for topic, np := range s.topics {
					for pt := int32(0); pt < np; pt++ {
						k := fmt.Sprintf("%s-%d", topic, pt)
						if seen[k] != 1 && !(bl.name == "cooperative-sticky" && reassign && seen[k] == 0) {
							t.Errorf("%s/%s reassign=%v: %s assigned %d times", n, bl.name, reassign, k, seen[k])
						}
						total++
					}
				}
				if n == "uniform" && !reassign && max-min > 1 {
					t.Errorf("%s/%s: unbalanced %d..%d", n, bl.name, min, max)
				}
				if total == 0 {
					t.Errorf("%s: no partitions", n)
				}
			}
		}
	}
}
