#!/usr/bin/env python3
"""Counts the Kafka requests in a pcap (tcpdump -w, Ethernet or Linux cooked, IPv4) sent to one
broker port, by client id and API, split into bursts (one burst per collection of `kcp serve`:
requests less than GAP seconds apart belong to one burst).

    count-requests.py CAPTURE.pcap PORT CLIENT_ID_PREFIX [GAP_SECONDS]

Streams are reassembled by TCP sequence number; each request frame is read from its size prefix,
its header gives the API key, version and client id. Standard library only."""
import struct
import sys
from collections import Counter, defaultdict

API = {0: "Produce", 1: "Fetch", 2: "ListOffsets", 3: "Metadata", 8: "OffsetCommit", 9: "OffsetFetch",
       10: "FindCoordinator", 11: "JoinGroup", 12: "Heartbeat", 13: "LeaveGroup", 14: "SyncGroup",
       15: "DescribeGroups", 16: "ListGroups", 17: "SaslHandshake", 18: "ApiVersions",
       36: "SaslAuthenticate", 60: "DescribeCluster", 69: "ConsumerGroupDescribe"}


def packets(path):
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    endian = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    nano = magic in (0xA1B23C4D, 0x4D3CB2A1)
    linktype = struct.unpack(endian + "I", data[20:24])[0]
    off = 24
    while off + 16 <= len(data):
        sec, frac, incl, _orig = struct.unpack(endian + "IIII", data[off:off + 16])
        off += 16
        frame = data[off:off + incl]
        off += incl
        ts = sec + frac / (1e9 if nano else 1e6)
        if linktype == 1:      # Ethernet
            if struct.unpack(">H", frame[12:14])[0] != 0x0800:
                continue
            ip = frame[14:]
        elif linktype == 113:  # Linux cooked
            ip = frame[16:]
        elif linktype == 276:  # Linux cooked v2
            ip = frame[20:]
        else:
            sys.exit(f"link type {linktype} not handled")
        if not ip or ip[0] >> 4 != 4 or ip[9] != 6:
            continue
        ihl = (ip[0] & 15) * 4
        total = struct.unpack(">H", ip[2:4])[0]
        tcp = ip[ihl:total]
        sport, dport, seq = struct.unpack(">HHI", tcp[:8])
        doff = (tcp[12] >> 4) * 4
        syn = tcp[13] & 2
        yield ts, (ip[12:16], sport, ip[16:20], dport), seq, syn, tcp[doff:]


def main():
    path, port, prefix = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    gap = float(sys.argv[4]) if len(sys.argv) > 4 else 2.0
    streams = defaultdict(dict)   # key -> {seq: (ts, payload)}
    for ts, key, seq, syn, payload in packets(path):
        if key[3] != port or syn or not payload:
            continue
        streams[key].setdefault(seq, (ts, payload))
    requests = []  # (ts, client_id, api, version)
    for key, segs in streams.items():
        buf, times, expect = b"", [], None
        for seq in sorted(segs):
            ts, payload = segs[seq]
            if expect is not None and seq < expect:  # a retransmission overlapping what we have
                payload = payload[expect - seq:]
            buf += payload
            times.append((len(buf), ts))
            expect = seq + len(segs[seq][1])
        pos = 0
        while pos + 4 <= len(buf):
            size = struct.unpack(">i", buf[pos:pos + 4])[0]
            if size < 10 or pos + 4 + size > len(buf):
                break
            api, version, _corr = struct.unpack(">hhi", buf[pos + 4:pos + 12])
            n = struct.unpack(">h", buf[pos + 12:pos + 14])[0]
            client = buf[pos + 14:pos + 14 + n].decode(errors="replace") if n >= 0 else ""
            at = next(t for end, t in times if end > pos)
            requests.append((at, client, api, version))
            pos += 4 + size
    mine = sorted(r for r in requests if r[1].startswith(prefix))
    others = Counter(r[1] for r in requests if not r[1].startswith(prefix))
    bursts, last = [], None
    for r in mine:
        if last is None or r[0] - last > gap:
            bursts.append([])
        bursts[-1].append(r)
        last = r[0]
    print(f"{len(mine)} requests from client ids starting {prefix!r} in {len(bursts)} bursts "
          f"(gap > {gap} s); other clients: {dict(others) or 'none'}")
    for i, b in enumerate(bursts):
        c = Counter(f"{API.get(a, a)} v{v}" for _, _, a, v in b)
        span = b[-1][0] - b[0][0]
        print(f"burst {i + 1}: {len(b)} requests over {span:.3f} s: "
              + ", ".join(f"{k} x{n}" for k, n in sorted(c.items())))


if __name__ == "__main__":
    main()
