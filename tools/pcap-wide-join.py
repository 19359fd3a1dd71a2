#!/usr/bin/env python3
"""Writes a pcap holding one JoinGroup v9 round whose response frame is as large as `kcp pcap`
decodes by default (16 MiB) and holds only members with empty ids and empty metadata (4 bytes
each, about 4.2 million members): the case where a decoder that materializes a frame's members
needs far more memory than the frame itself.

    tools/pcap-wide-join.py /tmp/wide-join.pcap [FRAME_BYTES]
    /usr/bin/time -v target/release/kcp pcap /tmp/wide-join.pcap > /dev/null   # "Maximum resident set size"
"""
import struct
import sys

CLIENT = (bytes([10, 0, 0, 1]), 40000)
SERVER = (bytes([10, 0, 0, 2]), 9092)
MSS = 65000


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def compact_str(s):
    b = s.encode()
    return varint(len(b) + 1) + b


def join_request(correlation):
    header = struct.pack(">hhi", 11, 9, correlation) + struct.pack(">h", 4) + b"wide" + b"\x00"
    body = (
        compact_str("wide-group")
        + struct.pack(">ii", 30000, 60000)
        + compact_str("m-1")
        + b"\x00"  # group_instance_id: null
        + compact_str("consumer")
        + varint(1 + 1)  # one protocol
        + compact_str("range")
        + varint(0 + 1)  # empty metadata
        + b"\x00"
        + b"\x00"  # reason: null
        + b"\x00"
    )
    frame = header + body
    return struct.pack(">i", len(frame)) + frame


def join_response(correlation, frame_bytes):
    header = struct.pack(">i", correlation) + b"\x00"
    head = (
        struct.pack(">ihi", 0, 0, 7)
        + compact_str("consumer")
        + compact_str("range")
        + compact_str("m-1")
        + b"\x00"  # skip_assignment
        + compact_str("m-1")
    )
    member = b"\x01\x00\x01\x00"  # member_id "", group_instance_id null, metadata empty, no tags
    fixed = len(header) + len(head) + 1  # + the trailing tags
    count = (frame_bytes - fixed - 5) // len(member)
    count_bytes = varint(count + 1)
    count = (frame_bytes - fixed - len(count_bytes)) // len(member)
    count_bytes = varint(count + 1)
    frame = header + head + count_bytes + member * count + b"\x00"
    return struct.pack(">i", len(frame)) + frame, count


def packet(from_client, seq, flags, payload):
    (src, sport), (dst, dport) = (CLIENT, SERVER) if from_client else (SERVER, CLIENT)
    tcp = struct.pack(">HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, 0, 0x50, flags, 0xFFFF, 0, 0) + payload
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 0, 0x4000, 64, 6, 0, src, dst) + tcp
    return b"\x00" * 12 + b"\x08\x00" + ip


def main():
    path = sys.argv[1]
    frame_bytes = int(sys.argv[2]) if len(sys.argv) > 2 else 16 * 1024 * 1024
    response, count = join_response(2, frame_bytes)
    packets = [packet(True, 999, 0x02, b""), packet(False, 4999, 0x12, b"")]
    request = join_request(2)
    packets.append(packet(True, 1000, 0x18, request))
    seq = 5000
    for at in range(0, len(response), MSS):
        chunk = response[at : at + MSS]
        packets.append(packet(False, seq, 0x18, chunk))
        seq += len(chunk)
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535 + 64, 1))
        for i, p in enumerate(packets):
            f.write(struct.pack("<IIII", 1_700_000_000, i, len(p), len(p)))
            f.write(p)
    print(f"{path}: JoinGroup v9 response of {len(response) - 4} bytes with {count} members", file=sys.stderr)


if __name__ == "__main__":
    main()
