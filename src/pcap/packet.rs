//! Link layer, IPv4/IPv6 and TCP headers: from a captured frame to a TCP segment.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// Link types understood by [`parse_frame`] (tcpdump.org link-layer header type values).
pub(crate) const LINKTYPE_NULL: i32 = 0;
pub(crate) const LINKTYPE_ETHERNET: i32 = 1;
pub(crate) const LINKTYPE_RAW: i32 = 101;
pub(crate) const LINKTYPE_LOOP: i32 = 108;
pub(crate) const LINKTYPE_LINUX_SLL: i32 = 113;
pub(crate) const LINKTYPE_IPV4: i32 = 228;
pub(crate) const LINKTYPE_IPV6: i32 = 229;
pub(crate) const LINKTYPE_LINUX_SLL2: i32 = 276;
/// DLT_RAW as some BSDs number it in pcap files.
const LINKTYPE_RAW_BSD_12: i32 = 12;
const LINKTYPE_RAW_BSD_14: i32 = 14;

/// A TCP segment found in a captured frame.
#[derive(Debug)]
pub(crate) struct Segment<'a> {
    pub src: SocketAddr,
    pub dst: SocketAddr,
    pub seq: u32,
    pub syn: bool,
    pub fin: bool,
    pub rst: bool,
    /// The payload bytes present in the capture.
    pub payload: &'a [u8],
    /// Payload bytes the TCP segment carried but the capture cut off (snap length).
    pub missing: usize,
}

/// Why a frame gave no TCP segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Skip {
    /// A link type this reader does not know.
    LinkType,
    /// Not IPv4/IPv6 (ARP, ...) or not TCP.
    NotTcp,
    /// An IP fragment (not reassembled).
    Fragment,
    /// Headers cut off by the snap length or malformed.
    Malformed,
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// Parses one captured frame (possibly cut short by the snap length: the IP lengths tell).
pub(crate) fn parse_frame(linktype: i32, data: &[u8]) -> Result<Segment<'_>, Skip> {
    let (ip, ethertype) = match linktype {
        LINKTYPE_ETHERNET => {
            let mut at = 12;
            let mut ethertype = be16(data, at).ok_or(Skip::Malformed)?;
            // 802.1Q / 802.1ad tags.
            while ethertype == 0x8100 || ethertype == 0x88a8 || ethertype == 0x9100 {
                at += 4;
                ethertype = be16(data, at).ok_or(Skip::Malformed)?;
            }
            (&data[at + 2..], Some(ethertype))
        }
        LINKTYPE_LINUX_SLL => (data.get(16..).ok_or(Skip::Malformed)?, Some(be16(data, 14).ok_or(Skip::Malformed)?)),
        LINKTYPE_LINUX_SLL2 => (data.get(20..).ok_or(Skip::Malformed)?, Some(be16(data, 0).ok_or(Skip::Malformed)?)),
        LINKTYPE_NULL | LINKTYPE_LOOP => {
            let raw: [u8; 4] = data.get(..4).ok_or(Skip::Malformed)?.try_into().map_err(|_| Skip::Malformed)?;
            // NULL is in the capturing host's byte order, LOOP in network order: accept both.
            let family = if linktype == LINKTYPE_LOOP {
                u32::from_be_bytes(raw)
            } else if u32::from_le_bytes(raw) < 0x100 {
                u32::from_le_bytes(raw)
            } else {
                u32::from_be_bytes(raw)
            };
            let ethertype = match family {
                2 => 0x0800,
                10 | 24 | 28 | 30 => 0x86dd,
                _ => return Err(Skip::NotTcp),
            };
            (&data[4..], Some(ethertype))
        }
        LINKTYPE_RAW | LINKTYPE_RAW_BSD_12 | LINKTYPE_RAW_BSD_14 | LINKTYPE_IPV4 | LINKTYPE_IPV6 => (data, None),
        _ => return Err(Skip::LinkType),
    };
    let ethertype = match ethertype {
        Some(t) => t,
        None => match ip.first().map(|b| b >> 4) {
            Some(4) => 0x0800,
            Some(6) => 0x86dd,
            _ => return Err(Skip::NotTcp),
        },
    };
    match ethertype {
        0x0800 => parse_ipv4(ip),
        0x86dd => parse_ipv6(ip),
        _ => Err(Skip::NotTcp),
    }
}

fn parse_ipv4(ip: &[u8]) -> Result<Segment<'_>, Skip> {
    let first = *ip.first().ok_or(Skip::Malformed)?;
    if first >> 4 != 4 {
        return Err(Skip::Malformed);
    }
    let ihl = usize::from(first & 0x0f) * 4;
    let total = usize::from(be16(ip, 2).ok_or(Skip::Malformed)?);
    if ihl < 20 || total < ihl || ip.len() < ihl {
        return Err(Skip::Malformed);
    }
    let flags_frag = be16(ip, 6).ok_or(Skip::Malformed)?;
    if flags_frag & 0x3fff != 0 {
        return Err(Skip::Fragment);
    }
    if ip[9] != 6 {
        return Err(Skip::NotTcp);
    }
    let src = IpAddr::V4(Ipv4Addr::new(ip[12], ip[13], ip[14], ip[15]));
    let dst = IpAddr::V4(Ipv4Addr::new(ip[16], ip[17], ip[18], ip[19]));
    // Ethernet may pad short frames: the IP total length says where the packet ends.
    let present = ip.len().min(total);
    let missing = total - present;
    parse_tcp(src, dst, &ip[ihl..present], total - ihl, missing)
}

fn parse_ipv6(ip: &[u8]) -> Result<Segment<'_>, Skip> {
    if ip.len() < 40 || ip[0] >> 4 != 6 {
        return Err(Skip::Malformed);
    }
    let payload_len = usize::from(be16(ip, 4).ok_or(Skip::Malformed)?);
    let mut next = ip[6];
    let src: [u8; 16] = ip[8..24].try_into().map_err(|_| Skip::Malformed)?;
    let dst: [u8; 16] = ip[24..40].try_into().map_err(|_| Skip::Malformed)?;
    let end = 40 + payload_len;
    let present_end = ip.len().min(end);
    let missing = end - present_end;
    let mut at = 40;
    loop {
        match next {
            6 => break,
            // Hop-by-hop, routing, destination options.
            0 | 43 | 60 => {
                next = *ip.get(at).ok_or(Skip::Malformed)?;
                at += (usize::from(*ip.get(at + 1).ok_or(Skip::Malformed)?) + 1) * 8;
            }
            44 => return Err(Skip::Fragment),
            _ => return Err(Skip::NotTcp),
        }
        if at > present_end {
            return Err(Skip::Malformed);
        }
    }
    let tcp_total = end.checked_sub(at).ok_or(Skip::Malformed)?;
    parse_tcp(
        IpAddr::V6(Ipv6Addr::from(src)),
        IpAddr::V6(Ipv6Addr::from(dst)),
        &ip[at..present_end],
        tcp_total,
        missing,
    )
}

/// `tcp` holds the bytes present; `total` the TCP header + payload length on the wire.
fn parse_tcp(src: IpAddr, dst: IpAddr, tcp: &[u8], total: usize, missing: usize) -> Result<Segment<'_>, Skip> {
    let sport = be16(tcp, 0).ok_or(Skip::Malformed)?;
    let dport = be16(tcp, 2).ok_or(Skip::Malformed)?;
    let seq = be32(tcp, 4).ok_or(Skip::Malformed)?;
    let off_flags = be16(tcp, 12).ok_or(Skip::Malformed)?;
    let header = usize::from(off_flags >> 12) * 4;
    if header < 20 || tcp.len() < header || total < header {
        return Err(Skip::Malformed);
    }
    Ok(Segment {
        src: SocketAddr::new(src, sport),
        dst: SocketAddr::new(dst, dport),
        seq,
        syn: off_flags & 0x02 != 0,
        fin: off_flags & 0x01 != 0,
        rst: off_flags & 0x04 != 0,
        payload: &tcp[header..],
        missing,
    })
}
