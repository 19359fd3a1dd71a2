#!/usr/bin/env python3
"""Builds a large pcap for benchmarking `kcp conform` against `kcp pcap` (issue 37: "a 1 GB capture in
bounded memory at no less than the speed of kcp pcap"), by repeating the committed captures.

    python3 tools/bench-conform-capture.py OUT.pcap [SIZE_MB] [CAPTURE.pcap ...]

Each copy of a capture gets its own client address (10.a.b.c in place of 127.0.0.1 on the client
side of every packet; the broker keeps 127.0.0.1:9092) and its timestamps moved past the previous
copy, so every copy is a new set of TCP connections to the same broker, as a long capture of many
consumers would be. Group ids and member ids repeat from copy to copy (they are inside the Kafka
frames, left as they are). Standard library only; the output is not committed (it is large).
Only the committed captures' form is handled: classic pcap, little-endian, link type 1 (Ethernet),
IPv4/TCP, broker port 9092.
"""

import struct
import sys

BROKER_PORT = 9092


def packets(path):
    data = open(path, "rb").read()
    magic, _, _, _, _, _, linktype = struct.unpack_from("<IHHiIII", data, 0)
    if magic != 0xA1B2C3D4 or linktype != 1:
        sys.exit(f"{path}: not a little-endian microsecond pcap of Ethernet frames")
    at = 24
    out = []
    while at + 16 <= len(data):
        sec, usec, incl, orig = struct.unpack_from("<IIII", data, at)
        frame = data[at + 16 : at + 16 + incl]
        at += 16 + incl
        if len(frame) < 14 + 20 + 4 or frame[12:14] != b"\x08\x00":
            continue
        ihl = (frame[14] & 0x0F) * 4
        sport, dport = struct.unpack_from(">HH", frame, 14 + ihl)
        # The client's address: the source of what goes to the broker, else the destination.
        client_at = 14 + 12 if dport == BROKER_PORT else 14 + 16
        out.append((sec * 1_000_000 + usec, orig, bytearray(frame), client_at))
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    target = int(sys.argv[2]) * 1024 * 1024 if len(sys.argv) > 2 else 1024 * 1024 * 1024
    inputs = sys.argv[3:] or [
        "testdata/pcap/java-cooperative-sticky.pcap",
        "testdata/pcap/mixed-java-rdkafka.pcap",
        "testdata/pcap/rdkafka-cooperative-sticky.pcap",
        "testdata/pcap/rdkafka-range.pcap",
    ]
    captures = [packets(p) for p in inputs]
    written = 24
    copy = 0
    clock = min(c[0][0] for c in captures if c)
    with open(sys.argv[1], "wb") as out:
        out.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 16384, 1))
        while written < target:
            for capture in captures:
                if not capture or written >= target:
                    continue
                copy += 1
                address = bytes([10, (copy >> 16) & 0xFF, (copy >> 8) & 0xFF, copy & 0xFF])
                shift = clock - capture[0][0]
                for ts, orig, frame, client_at in capture:
                    frame[client_at : client_at + 4] = address
                    t = ts + shift
                    out.write(struct.pack("<IIII", t // 1_000_000, t % 1_000_000, len(frame), orig))
                    out.write(frame)
                    written += 16 + len(frame)
                clock = capture[-1][0] + shift + 1_000_000
    print(f"{sys.argv[1]}: {written} bytes, {copy} copies of {len(inputs)} captures")


if __name__ == "__main__":
    main()
