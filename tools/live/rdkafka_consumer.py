#!/usr/bin/env python3
"""A librdkafka (confluent-kafka) consumer-group member for the live tests.

Same options and output as tools/live/java/LiveConsumer.java: it subscribes, polls in a loop
(fetching but ignoring records, committing nothing) and prints its rebalance callbacks as JSON
lines in the shape of `kcp group join` (../shared/spec/cli.md):

  {"event": "config", ...}          first: its own subscription settings
  {"event": "joined", ...}          before an assignment, when the member id changed
  {"event": "assigned"|"revoked"|"lost", "partitions": [...], "owned": [...]}
  {"event": "reported", ...}        after each assignment: consumer.assignment() and member id
  {"event": "warning", ...}         a non-fatal client error (e.g. a broker went away)
  {"event": "error", ...}           a fatal client error; exit 1
  {"event": "left"}                 after close() returned (LeaveGroup unless static); exit 0

librdkafka does not expose the generation id to Python, so the lines carry none. With a
cooperative protocol the callbacks use incremental_assign/incremental_unassign (KIP-429
semantics; cooperative means `cooperative-sticky` or `--group-protocol consumer`), with an
eager one assign/unassign, so consumer.assignment() is current in "reported".

Run through `tools/live/kafka.sh rdkafka NAME ARGS...` (the venv with confluent-kafka==2.16.1).
"""

import argparse
import json
import os
import signal
import sys
import time

from confluent_kafka import Consumer, KafkaException, libversion, version


def now_ms():
    return int(time.time() * 1000)


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def grouped(tps):
    """[{"topic": .., "partitions": [..]}], sorted: the kcp contract's shape."""
    by_topic = {}
    for topic, partition in tps:
        by_topic.setdefault(topic, set()).add(partition)
    return [{"topic": t, "partitions": sorted(p)} for t, p in sorted(by_topic.items())]


def read_properties(path):
    props = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line[0] in "#!":
                continue
            key, _, value = line.partition("=")
            props[key.strip()] = value.strip()
    return props


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bootstrap", "--bootstrap-server", dest="bootstrap", required=True)
    p.add_argument("--group", required=True)
    p.add_argument("--topics", required=True, help="comma-separated")
    p.add_argument("--assignors", help="comma-separated librdkafka names: range, roundrobin, cooperative-sticky")
    p.add_argument("--group-protocol", choices=["classic", "consumer"], default="classic")
    p.add_argument("--remote-assignor")
    p.add_argument("--instance-id")
    p.add_argument("--rack")
    p.add_argument("--client-id")
    p.add_argument("--session-timeout-ms", type=int)
    p.add_argument("--heartbeat-interval-ms", type=int)
    p.add_argument("--duration-s", type=float, default=600)
    p.add_argument("--command-config", help="librdkafka properties file (key=value lines)")
    p.add_argument("--config", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--debug", help="librdkafka debug contexts, to stderr (e.g. cgrp)")
    a = p.parse_args()

    topics = a.topics.split(",")
    assignors = a.assignors.split(",") if a.assignors else []
    consumer_protocol = a.group_protocol == "consumer"
    if consumer_protocol and (assignors or a.session_timeout_ms or a.heartbeat_interval_ms):
        p.error("--group-protocol consumer takes no --assignors/--session-timeout-ms/--heartbeat-interval-ms")
    if not consumer_protocol and a.remote_assignor:
        p.error("--remote-assignor needs --group-protocol consumer")

    conf = {}
    if a.command_config:
        conf.update(read_properties(a.command_config))
    conf.update({
        "bootstrap.servers": a.bootstrap,
        "group.id": a.group,
        "group.protocol": a.group_protocol,
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "auto.offset.reset": "latest",
    })
    if assignors:
        conf["partition.assignment.strategy"] = ",".join(assignors)
    if a.remote_assignor:
        conf["group.remote.assignor"] = a.remote_assignor
    if a.instance_id:
        conf["group.instance.id"] = a.instance_id
    if a.rack:
        conf["client.rack"] = a.rack
    if a.client_id:
        conf["client.id"] = a.client_id
    if a.session_timeout_ms:
        conf["session.timeout.ms"] = a.session_timeout_ms
        conf["heartbeat.interval.ms"] = a.heartbeat_interval_ms or max(100, a.session_timeout_ms // 3)
    elif a.heartbeat_interval_ms:
        conf["heartbeat.interval.ms"] = a.heartbeat_interval_ms
    if a.debug:
        conf["debug"] = a.debug
    for kv in a.config:
        key, sep, value = kv.partition("=")
        if not sep or not key:
            p.error("--config wants KEY=VALUE")
        conf[key] = value

    stop = {"flag": False, "rc": 0}

    def on_error(err):
        if err.fatal():
            emit({"ts_ms": now_ms(), "event": "error", "error": {"kind": err.name(), "message": err.str()}})
            stop["flag"] = True
            stop["rc"] = 1
        else:
            emit({"ts_ms": now_ms(), "event": "warning", "error": {"kind": err.name(), "message": err.str()}})

    conf["error_cb"] = on_error

    emit({
        "ts_ms": now_ms(), "event": "config", "client": "librdkafka",
        "client_version": libversion()[0], "confluent_kafka_version": version() if isinstance(version(), str) else version()[0], "pid": os.getpid(),
        "group": a.group, "topics": topics, "group_protocol": a.group_protocol,
        "assignors": assignors if assignors or consumer_protocol else ["range", "roundrobin"],
        "remote_assignor": a.remote_assignor, "instance_id": a.instance_id, "rack": a.rack,
        "client_id": a.client_id, "session_timeout_ms": a.session_timeout_ms, "duration_s": a.duration_s,
    })

    try:
        consumer = Consumer(conf)
    except KafkaException as e:
        err = e.args[0]
        emit({"ts_ms": now_ms(), "event": "error", "error": {"kind": err.name(), "message": err.str()}})
        return 1

    owned = set()
    state = {"member_id": None}

    # confluent-kafka has no rebalance_protocol(): the protocol follows from the configuration
    # (librdkafka refuses to mix eager and cooperative assignors; KIP-848 is incremental).
    is_cooperative = consumer_protocol or assignors == ["cooperative-sticky"]

    def cooperative(_c):
        return is_cooperative

    def as_pairs(partitions):
        return [(tp.topic, tp.partition) for tp in partitions]

    def on_assign(c, partitions):
        if cooperative(c):
            c.incremental_assign(partitions)
        else:
            c.assign(partitions)
        member_id = c.memberid()
        if member_id != state["member_id"]:
            state["member_id"] = member_id
            emit({"ts_ms": now_ms(), "event": "joined", "member_id": member_id})
        pairs = as_pairs(partitions)
        owned.update(pairs)
        emit({"ts_ms": now_ms(), "event": "assigned", "partitions": grouped(pairs), "owned": grouped(owned)})
        emit({"ts_ms": now_ms(), "event": "reported", "member_id": member_id,
              "group_instance_id": a.instance_id, "assignment": grouped(as_pairs(c.assignment())),
              "subscription": sorted(topics)})

    def release(event):
        def callback(c, partitions):
            pairs = as_pairs(partitions)
            owned.difference_update(pairs)
            emit({"ts_ms": now_ms(), "event": event, "partitions": grouped(pairs), "owned": grouped(owned)})
            if cooperative(c):
                c.incremental_unassign(partitions)
            else:
                c.unassign()
        return callback

    def on_signal(_signum, _frame):
        stop["flag"] = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    deadline = time.monotonic() + a.duration_s
    try:
        consumer.subscribe(topics, on_assign=on_assign, on_revoke=release("revoked"), on_lost=release("lost"))
        while not stop["flag"] and time.monotonic() < deadline:
            msg = consumer.poll(0.1)
            if msg is not None and msg.error() is not None:
                err = msg.error()
                if err.fatal():
                    on_error(err)
                else:
                    emit({"ts_ms": now_ms(), "event": "warning",
                          "error": {"kind": err.name(), "message": err.str()}})
    except KafkaException as e:
        err = e.args[0]
        emit({"ts_ms": now_ms(), "event": "error", "error": {"kind": err.name(), "message": err.str()}})
        stop["rc"] = 1
    except Exception as e:  # noqa: BLE001 - an exception raised in a callback comes out of poll()
        emit({"ts_ms": now_ms(), "event": "error", "error": {"kind": type(e).__name__, "message": str(e)}})
        stop["rc"] = 1
    try:
        consumer.close()
    except (KafkaException, RuntimeError) as e:
        emit({"ts_ms": now_ms(), "event": "error", "error": {"kind": type(e).__name__, "message": str(e)}})
        stop["rc"] = stop["rc"] or 1
    emit({"ts_ms": now_ms(), "event": "left"})
    return stop["rc"]


if __name__ == "__main__":
    sys.exit(main())
