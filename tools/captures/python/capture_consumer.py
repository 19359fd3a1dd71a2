#!/usr/bin/env python3
"""librdkafka consumer (via confluent-kafka) used only to generate packet captures.

usage: capture_consumer.py BOOTSTRAP key=value ... -- topic [topic ...]
  keys are librdkafka consumer properties, plus run.ms (poll time before close(), at most 120000)
  and label (name printed in the log).
Every rebalance callback prints one JSON line to stdout. With debug=cgrp in the properties librdkafka's own
log (stderr) shows the JoinGroup/SyncGroup exchanges with generation ids.
"""
import json
import sys
import time

from confluent_kafka import Consumer, libversion, version

MAX_RUN_MS = 120_000


def _ver(v):
    return v[0] if isinstance(v, tuple) else v


def parts_json(parts):
    by_topic = {}
    for tp in parts:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return {t: sorted(p) for t, p in sorted(by_topic.items())}


def main(argv):
    bootstrap = argv[1]
    sep = argv.index("--")
    opts = dict(a.split("=", 1) for a in argv[2:sep])
    topics = argv[sep + 1:]
    run_ms = min(MAX_RUN_MS, int(opts.pop("run.ms", "20000")))
    label = opts.pop("label", opts.get("client.id", "rdkafka"))
    conf = {"bootstrap.servers": bootstrap, "auto.offset.reset": "earliest"}
    conf.update(opts)
    consumer = Consumer(conf)

    def emit(event, parts):
        try:
            assignment = parts_json(consumer.assignment())
        except Exception as e:  # noqa: BLE001 - only for the log
            assignment = repr(e)
        print(json.dumps({"event": event, "label": label, "member_id": consumer.memberid(),
                          "partitions": parts_json(parts), "assignment": assignment,
                          "t_ms": int(time.time() * 1000)}), flush=True)

    consumer.subscribe(topics,
                       on_assign=lambda c, p: emit("assigned", p),
                       on_revoke=lambda c, p: emit("revoked", p),
                       on_lost=lambda c, p: emit("lost", p))
    print(json.dumps({"event": "subscribed", "label": label, "config": opts, "topics": topics,
                      "confluent_kafka": _ver(version()), "librdkafka": _ver(libversion())}), flush=True)
    start = time.monotonic()
    while (time.monotonic() - start) * 1000 < run_ms:
        consumer.poll(0.2)
    print(json.dumps({"event": "closing", "label": label, "member_id": consumer.memberid(),
                      "assignment": parts_json(consumer.assignment())}), flush=True)
    consumer.close()
    print(json.dumps({"event": "closed", "label": label}), flush=True)


if __name__ == "__main__":
    main(sys.argv)
