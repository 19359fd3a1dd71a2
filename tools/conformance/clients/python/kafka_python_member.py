#!/usr/bin/env python3
"""One kafka-python consumer-group member for the conformance captures (tools/conformance/live.sh):
joins GROUP on TOPIC with ASSIGNOR, polls for SECONDS, then closes (LeaveGroup).

    kafka_python_member.py BOOTSTRAP GROUP TOPIC CLIENT_ID range|roundrobin|sticky|cooperative-sticky SECONDS
"""
import sys
import time

from kafka import KafkaConsumer
from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
from kafka.coordinator.assignors.range import RangePartitionAssignor
from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor

ASSIGNORS = {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor,
             "sticky": StickyPartitionAssignor, "cooperative-sticky": CooperativeStickyAssignor}

bootstrap, group, topic, client_id, assignor, seconds = sys.argv[1:7]
consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, client_id=client_id,
                         partition_assignment_strategy=[ASSIGNORS[assignor]], session_timeout_ms=10000,
                         heartbeat_interval_ms=1000, enable_auto_commit=False)
deadline = time.time() + int(seconds)
while time.time() < deadline:
    consumer.poll(timeout_ms=500)
consumer.close()
