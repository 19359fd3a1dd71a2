"""Write draft corpus vectors produced by kafka-python's own encoders.

kafka-python 3.x generates ConsumerProtocolSubscription / ConsumerProtocolAssignment
from Kafka's JSON schemas (kafka.protocol.consumer.metadata); its assignors return
those objects from metadata(), and the JoinGroup request serialises them with
.encode() (version header included).

Usage: python produce.py <vectors-root>   (writes <root>/kafka-python-<version>/)
Run with PYTHONHASHSEED=0: the range/roundrobin/sticky assignors pass a Python set
of topics straight through, so their topic order depends on string hashing.
"""
import os
import sys
from importlib.metadata import version as dist_version

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from pydraft import Drafts  # noqa: E402

from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
from kafka.coordinator.assignors.range import RangePartitionAssignor
from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
from kafka.protocol.consumer.metadata import (
    ConsumerProtocolAssignment as A,
    ConsumerProtocolSubscription as S,
)

VERSION = dist_version("kafka-python")
DRAFTS = None


def put(*args, **kwargs):
    DRAFTS.put(*args, **kwargs)


def sub_tp(topic, partitions, v):
    return S.TopicPartition(topic=topic, partitions=partitions)  # the nested struct exists from v1 only


def asg_tp(topic, partitions, v):
    return A.TopicPartition(topic=topic, partitions=partitions, version=v)


def main():
    global DRAFTS
    if len(sys.argv) != 2:
        sys.exit("usage: produce.py <vectors-root>")
    if os.environ.get("PYTHONHASHSEED") != "0":
        sys.exit("run with PYTHONHASHSEED=0 (set iteration order of topic names)")
    DRAFTS = Drafts(sys.argv[1], "kafka-python", VERSION)

    cases = [
        ("basic", "topics [foo, bar] (unsorted), null userData, owned foo-0, generation 5, rack r1",
         lambda v: S(version=v, topics=["foo", "bar"], user_data=None,
                     owned_partitions=[sub_tp("foo", [0], v)], generation_id=5, rack_id="r1")),
        ("empty-user-data", "topics [foo], empty (non-null) userData, defaults for the rest",
         lambda v: S(version=v, topics=["foo"], user_data=b"")),
        ("owned-unsorted", "topics [foo, bar], userData 010203, owned foo:[2,0] then bar:[1] (unsorted), generation 7, rack \"\"",
         lambda v: S(version=v, topics=["foo", "bar"], user_data=b"\x01\x02\x03",
                     owned_partitions=[sub_tp("foo", [2, 0], v), sub_tp("bar", [1], v)],
                     generation_id=7, rack_id="")),
    ]
    for suffix, desc, build in cases:
        for v in range(4):
            put(f"subscription-v{v}-{suffix}",
                f"kafka-python ConsumerProtocolSubscription(version={v}).encode(): {desc} (fields above v{v} dropped)",
                f"kafka.protocol.consumer.metadata.ConsumerProtocolSubscription(version={v}, ...).encode()",
                "subscription", build(v).encode())
    put("subscription-v3-defaults",
        "kafka-python ConsumerProtocolSubscription(version=3, topics=[foo]).encode(): every other field left at its schema default",
        "ConsumerProtocolSubscription(version=3, topics=['foo']).encode()",
        "subscription", S(version=3, topics=["foo"]).encode(),
        notes="Schema defaults: userData null, no owned partitions, generation -1, rack null.")
    for v in range(4):
        put(f"assignment-v{v}-basic",
            f"kafka-python ConsumerProtocolAssignment(version={v}).encode(): foo:[0,2] then bar:[1], null userData",
            f"ConsumerProtocolAssignment(version={v}, assigned_partitions=[foo:[0,2], bar:[1]], user_data=None).encode()",
            "assignment",
            A(version=v, assigned_partitions=[asg_tp("foo", [0, 2], v), asg_tp("bar", [1], v)], user_data=None).encode())
        put(f"assignment-v{v}-empty",
            f"kafka-python ConsumerProtocolAssignment(version={v}).encode(): no partitions, empty (non-null) userData",
            f"ConsumerProtocolAssignment(version={v}, assigned_partitions=[], user_data=b'').encode()",
            "assignment", A(version=v, assigned_partitions=[], user_data=b"").encode())

    # What the built-in assignors put in JoinGroup (BaseCoordinator.group_protocols()).
    topics = {"foo", "bar"}
    order = list(topics)
    for cls, label in ((RangePartitionAssignor, "range"), (RoundRobinPartitionAssignor, "roundrobin")):
        put(f"{label}-assignor-metadata",
            f"kafka-python {cls.__name__}.metadata({{foo, bar}}).encode(): the JoinGroup metadata of a {label} consumer",
            f"{cls.__name__}.metadata({{'foo', 'bar'}}).encode()",
            "subscription", cls.metadata(topics).encode(),
            notes=f"Version 0 with empty (non-null) userData. Topics come from a Python set, so their order follows string hashing ({order} with PYTHONHASHSEED=0).")

    sticky = StickyPartitionAssignor()
    put("sticky-assignor-metadata-fresh",
        "kafka-python StickyPartitionAssignor().metadata({foo}).encode() before any assignment",
        "StickyPartitionAssignor().metadata({'foo'}).encode()",
        "subscription", sticky.metadata({"foo"}).encode())
    sticky.on_assignment(A.decode(A(version=0, assigned_partitions=[asg_tp("foo", [0, 1], 0)], user_data=None).encode()), 3)
    meta = sticky.metadata({"foo"})
    sticky_note = ("kafka-python serialises StickyAssignorUserData through ApiData.encode(), which prepends the 2-byte version "
                   "header (00 01) to the KIP-341 userData; Java's StickyAssignor has no such header, so it reads the header "
                   "and the array count together as one int32.")
    put("sticky-assignor-metadata",
        "kafka-python StickyPartitionAssignor.metadata({foo}).encode() after on_assignment(foo:[0,1], generation 3)",
        "a = StickyPartitionAssignor(); a.on_assignment(<foo:[0,1]>, 3); a.metadata({'foo'}).encode()",
        "subscription", meta.encode(), notes=sticky_note)
    put("sticky-user-data",
        "userData of kafka-python's StickyPartitionAssignor metadata after on_assignment(foo:[0,1], generation 3)",
        "StickyAssignorUserData(previous_assignment=[('foo', [0, 1])], generation=3).encode() as embedded by StickyPartitionAssignor.metadata",
        "sticky_user_data", meta.user_data.encode(), notes=sticky_note)

    coop = CooperativeStickyAssignor()
    put("cooperative-sticky-assignor-metadata-fresh",
        "kafka-python CooperativeStickyAssignor().metadata({foo, bar}).encode() before any assignment",
        "CooperativeStickyAssignor().metadata({'foo', 'bar'}).encode()",
        "subscription", coop.metadata(topics).encode(),
        notes="Subscription version 1, topics sorted, empty (non-null) userData.")
    coop.on_assignment(A.decode(A(version=1, assigned_partitions=[asg_tp("foo", [0], 1), asg_tp("bar", [1], 1)], user_data=None).encode()), 5)
    put("cooperative-sticky-assignor-metadata",
        "kafka-python CooperativeStickyAssignor.metadata({foo, bar}).encode() after on_assignment(foo:[0], bar:[1]; generation 5)",
        "c = CooperativeStickyAssignor(); c.on_assignment(<foo:[0], bar:[1]>, 5); c.metadata({'foo', 'bar'}).encode()",
        "subscription", coop.metadata(topics).encode(),
        notes="Subscription version 1 (no generation field: the leader cannot see it); owned partitions grouped in assignment order (foo before bar), not sorted by topic as Java does; userData empty.")
    print(f"kafka-python: wrote {DRAFTS.count} drafts to {DRAFTS.out}")


if __name__ == "__main__":
    main()
