#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""Read a libpcap capture of an Ethernet segment and check its RoCEv2
frames (UDP to port 4791) as a receiver would: the IP and UDP lengths
agree with the frame, the BTH is version 0 with the default P_Key, and
the ICRC is right (an RC FLUSH with rxe's wrong one is counted apart, by
sender: "rxe_flush_icrc MAC COUNT").  tshark 4.0 dissects the BTH but shows the ICRC without
checking it: this does.

Prints "key value" lines for tests/fabric/pcap.sh: frames, roce,
bad_length, bad_bth, bad_icrc, senders (distinct source MACs of RoCEv2
frames), then "sender MAC COUNT" lines and "bad N WHY" lines for the first
bad frames (N counts from 1, as tshark does).  Exits 1 when the file is no
Ethernet pcap.
"""
import struct
import sys
import zlib

ROCE_PORT = 4791
BTH_LEN = 12
# Linux 6.12's rxe gives an RC FLUSH an ICRC that goes on over its BTH,
# FETH and RETH once more, as they are (its opcode table has no payload
# offset for FLUSH; Documentation/hw/qhca-ethernet.rst): counted apart,
# with its senders, so that a qhca0 sending it would show.
RC_FLUSH = 0x1C


def icrc(masked):
    # The ICRC is CRC-32 over the transport's invariant fields, started as
    # if 8 bytes of ones (the LRH an IB packet would have, masked) came
    # first; zlib's CRC-32 then gives the value as the wire carries it.
    return zlib.crc32(b"\xff" * 8 + masked) & 0xFFFFFFFF


def check(frame):
    """None for a frame that is not RoCEv2; else (why, source MAC), why
    None for a good frame."""
    eth = 14
    if len(frame) < eth:
        return None
    etype = frame[12:14]
    if etype == b"\x81\x00":  # one VLAN tag
        etype, eth = frame[16:18], 18
    src = frame[6:12]
    if etype == b"\x08\x00":
        if len(frame) < eth + 20 or frame[eth] >> 4 != 4:
            return None
        ihl = (frame[eth] & 15) * 4
        if frame[eth + 9] != 17 or ihl < 20 or len(frame) < eth + ihl + 8:
            return None
        udp = eth + ihl
        if struct.unpack(">H", frame[udp + 2:udp + 4])[0] != ROCE_PORT:
            return None
        ip_len = struct.unpack(">H", frame[eth + 2:eth + 4])[0]
        # What the ICRC covers of the IP header, with the fields a router
        # may change (TOS, TTL, checksum) set to ones.
        ip = bytearray(frame[eth:udp])
        ip[1] = 0xFF
        ip[8] = 0xFF
        ip[10:12] = b"\xff\xff"
        ip_end = eth + ip_len
        if ip_len < ihl + 8:
            return ("IPv4 total length %d too short" % ip_len, src)
    elif etype == b"\x86\xdd":
        if len(frame) < eth + 48 or frame[eth + 6] != 17:
            return None
        udp = eth + 40
        if struct.unpack(">H", frame[udp + 2:udp + 4])[0] != ROCE_PORT:
            return None
        ip = bytearray(frame[eth:udp])
        # Traffic class, flow label and hop limit set to ones.
        ip[0] |= 0x0F
        ip[1:4] = b"\xff\xff\xff"
        ip[7] = 0xFF
        ip_end = udp + struct.unpack(">H", frame[eth + 4:eth + 6])[0]
    else:
        return None
    if ip_end > len(frame):
        return ("IP length past the frame's end", src)
    udp_len = struct.unpack(">H", frame[udp + 4:udp + 6])[0]
    if udp + udp_len != ip_end:
        return ("UDP length %d disagrees with the IP length" % udp_len, src)
    if udp_len < 8 + BTH_LEN + 4:
        return ("UDP length %d holds no BTH and ICRC" % udp_len, src)
    bth = udp + 8
    if frame[bth + 1] & 0x0F != 0:
        return ("BTH TVer %d" % (frame[bth + 1] & 0x0F), src)
    pkey = struct.unpack(">H", frame[bth + 2:bth + 4])[0]
    if pkey != 0xFFFF:
        return ("BTH P_Key 0x%04x, not the default 0xffff" % pkey, src)
    udph = bytearray(frame[udp:bth])
    udph[6:8] = b"\xff\xff"
    b = bytearray(frame[bth:ip_end - 4])
    b[4] = 0xFF  # the BTH's reserved byte before the QPN
    want = icrc(bytes(ip) + bytes(udph) + bytes(b))
    got = struct.unpack("<I", frame[ip_end - 4:ip_end])[0]
    if want != got and frame[bth] == RC_FLUSH and \
            zlib.crc32(frame[bth:ip_end - 4], want) == got:
        return ("rxe's FLUSH ICRC 0x%08x, want 0x%08x" % (got, want), src)
    if want != got:
        return ("ICRC 0x%08x, want 0x%08x" % (got, want), src)
    return (None, src)


def main():
    data = open(sys.argv[1], "rb").read()
    if len(data) < 24:
        sys.exit(1)
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        end = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        end = ">"
    else:
        sys.exit(1)
    if struct.unpack(end + "I", data[20:24])[0] != 1:  # LINKTYPE_ETHERNET
        sys.exit(1)
    frames = roce = 0
    bad = {"length": 0, "bth": 0, "icrc": 0}
    senders = {}
    rxe_flush = {}
    told = []
    off = 24
    while off + 16 <= len(data):
        caplen = struct.unpack(end + "I", data[off + 8:off + 12])[0]
        frame = data[off + 16:off + 16 + caplen]
        off += 16 + caplen
        frames += 1
        r = check(frame)
        if r is None:
            continue
        roce += 1
        why, src = r
        mac = ":".join("%02x" % x for x in src)
        senders[mac] = senders.get(mac, 0) + 1
        if why is None:
            continue
        if why.startswith("rxe's FLUSH ICRC"):
            rxe_flush[mac] = rxe_flush.get(mac, 0) + 1
            continue
        kind = "icrc" if why.startswith("ICRC") else \
            "bth" if why.startswith("BTH") else "length"
        bad[kind] += 1
        if len(told) < 10:
            told.append("bad %d %s" % (frames, why))
    if off != len(data):
        sys.exit(1)
    print("frames", frames)
    print("roce", roce)
    for k in ("length", "bth", "icrc"):
        print("bad_" + k, bad[k])
    print("senders", len(senders))
    for mac in sorted(senders):
        print("sender", mac, senders[mac])
    for mac in sorted(rxe_flush):
        print("rxe_flush_icrc", mac, rxe_flush[mac])
    for t in told:
        print(t)


if __name__ == "__main__":
    main()
