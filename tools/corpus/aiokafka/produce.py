"""Write draft corpus vectors produced by aiokafka's own encoders.

aiokafka (0.11+) carries its own copy of the classic consumer protocol:
aiokafka.coordinator.protocol.ConsumerProtocolMemberMetadata / ...Assignment are
v0-layout Structs; its assignors (range, roundrobin, sticky) return them from
metadata()/assign(), and GroupCoordinator sends metadata.encode().

Usage: python produce.py <vectors-root>   (writes <root>/aiokafka-<version>/)
Run with PYTHONHASHSEED=0: assignors pass a Python set of topics straight through.
"""
import os
import sys
from importlib.metadata import version as dist_version

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from pydraft import Drafts  # noqa: E402

from aiokafka.coordinator.assignors.range import RangePartitionAssignor
from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
from aiokafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
from aiokafka.coordinator.protocol import (
    ConsumerProtocolMemberAssignment as A,
    ConsumerProtocolMemberMetadata as M,
)

VERSION = dist_version("aiokafka")
DRAFTS = None


def put(*args, **kwargs):
    DRAFTS.put(*args, **kwargs)


class Cluster:
    """Stand-in for aiokafka's ClusterMetadata: foo has partitions 0..2, bar 0..1."""

    def partitions_for_topic(self, topic):
        return {"foo": {0, 1, 2}, "bar": {0, 1}}.get(topic)


def main():
    global DRAFTS
    if len(sys.argv) != 2:
        sys.exit("usage: produce.py <vectors-root>")
    if os.environ.get("PYTHONHASHSEED") != "0":
        sys.exit("run with PYTHONHASHSEED=0 (set iteration order of topic names)")
    DRAFTS = Drafts(sys.argv[1], "aiokafka", VERSION)

    put("member-metadata-v0-basic",
        "aiokafka ConsumerProtocolMemberMetadata(0, [foo, bar], None).encode(): topics unsorted, null userData",
        "aiokafka.coordinator.protocol.ConsumerProtocolMemberMetadata(0, ['foo', 'bar'], None).encode()",
        "subscription", M(0, ["foo", "bar"], None).encode())
    put("member-metadata-v0-user-data",
        "aiokafka ConsumerProtocolMemberMetadata(0, [foo], 010203).encode()",
        "ConsumerProtocolMemberMetadata(0, ['foo'], b'\\x01\\x02\\x03').encode()",
        "subscription", M(0, ["foo"], b"\x01\x02\x03").encode())
    put("member-metadata-v1-v0-layout",
        "aiokafka ConsumerProtocolMemberMetadata(1, [foo], b'').encode(): the Struct has only the v0 layout, so version 1 comes out without OwnedPartitions",
        "ConsumerProtocolMemberMetadata(1, ['foo'], b'').encode()",
        "subscription", M(1, ["foo"], b"").encode(),
        notes="aiokafka's built-in assignors all use version 0; a custom assignor that declares version 1 would send this malformed payload.")
    put("member-assignment-v0-basic",
        "aiokafka ConsumerProtocolMemberAssignment(0, [(foo, [0, 2]), (bar, [1])], None).encode()",
        "ConsumerProtocolMemberAssignment(0, [('foo', [0, 2]), ('bar', [1])], None).encode()",
        "assignment", A(0, [("foo", [0, 2]), ("bar", [1])], None).encode())

    topics = {"foo", "bar"}
    order = list(topics)
    for cls, label in ((RangePartitionAssignor, "range"), (RoundRobinPartitionAssignor, "roundrobin")):
        put(f"{label}-assignor-metadata",
            f"aiokafka {cls.__name__}.metadata({{foo, bar}}).encode(): the JoinGroup metadata of a {label} consumer",
            f"{cls.__name__}.metadata({{'foo', 'bar'}}).encode()",
            "subscription", cls.metadata(topics).encode(),
            notes=f"Version 0 with empty (non-null) userData. Topics come from a Python set, so their order follows string hashing ({order} with PYTHONHASHSEED=0).")
    members = {"m1": M(0, ["foo", "bar"], b""), "m2": M(0, ["foo", "bar"], b"")}
    asg = RoundRobinPartitionAssignor.assign(Cluster(), members)
    put("roundrobin-assignment",
        "aiokafka RoundRobinPartitionAssignor.assign: member m1 of [m1, m2] over foo(3 partitions), bar(2) gets bar:[0] foo:[0,2]",
        "RoundRobinPartitionAssignor.assign(cluster, {m1, m2 subscribed to foo, bar})['m1'].encode()",
        "assignment", asg["m1"].encode(),
        notes="Assignment version 0, topics sorted, empty (non-null) userData.")

    put("sticky-assignor-metadata-fresh",
        "aiokafka StickyPartitionAssignor.metadata({foo}).encode() before any assignment",
        "StickyPartitionAssignor.metadata({'foo'}).encode()",
        "subscription", StickyPartitionAssignor.metadata({"foo"}).encode())
    StickyPartitionAssignor.on_assignment(A(0, [("foo", [0, 1])], b""))
    StickyPartitionAssignor.on_generation_assignment(3)
    meta = StickyPartitionAssignor.metadata({"foo"})
    put("sticky-assignor-metadata",
        "aiokafka StickyPartitionAssignor.metadata({foo}).encode() after on_assignment(foo:[0,1]) and generation 3",
        "StickyPartitionAssignor.on_assignment(<foo:[0,1]>); .on_generation_assignment(3); .metadata({'foo'}).encode()",
        "subscription", meta.encode())
    put("sticky-user-data",
        "userData of aiokafka's StickyPartitionAssignor metadata after on_assignment(foo:[0,1]) and generation 3",
        "StickyAssignorUserDataV1(partitions_by_topic.items(), 3).encode() as embedded by StickyPartitionAssignor.metadata",
        "sticky_user_data", meta.user_data,
        notes="Unlike kafka-python 3.x, aiokafka writes the KIP-341 V1 userData without a version prefix.")
    print(f"aiokafka: wrote {DRAFTS.count} drafts to {DRAFTS.out}")


if __name__ == "__main__":
    main()
