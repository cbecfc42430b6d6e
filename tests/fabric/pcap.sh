#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# On the host, after tools/vm --pcap FILE: FILE is a libpcap capture of an
# Ethernet segment and holds RoCEv2 frames (UDP to port 4791).  tshark or
# tcpdump count them when the host has one; otherwise a few lines of
# python3 read the capture's headers.  TAP, one line per check.
#
# Usage: tests/fabric/pcap.sh FILE [MIN_ROCE_FRAMES (1)]
set -u
file=$1 min=${2:-1}
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n host: $*"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n host: $*"; }

# count: "FRAMES ROCE_FRAMES", or nothing when FILE is no Ethernet pcap.
count() {
	local all roce
	if command -v tshark > /dev/null; then
		all=$(tshark -r "$file" 2>/dev/null | wc -l) || return 1
		roce=$(tshark -r "$file" -Y 'udp.dstport == 4791' 2>/dev/null | wc -l)
		echo "$all $roce tshark"
	elif command -v tcpdump > /dev/null; then
		all=$(tcpdump -nr "$file" 2>/dev/null | wc -l) || return 1
		roce=$(tcpdump -nr "$file" 'udp dst port 4791' 2>/dev/null | wc -l)
		echo "$all $roce tcpdump"
	else
		python3 - "$file" <<'EOF'
import struct, sys

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
off = 24
while off + 16 <= len(data):
    caplen = struct.unpack(end + "I", data[off + 8:off + 12])[0]
    pkt = data[off + 16:off + 16 + caplen]
    off += 16 + caplen
    frames += 1
    eth = 14
    etype = pkt[12:14]
    if etype == b"\x81\x00":  # one VLAN tag
        etype, eth = pkt[16:18], 18
    if etype == b"\x08\x00" and len(pkt) >= eth + 20:
        ihl = (pkt[eth] & 15) * 4
        udp = eth + ihl
        if pkt[eth + 9] == 17 and len(pkt) >= udp + 4:
            roce += struct.unpack(">H", pkt[udp + 2:udp + 4])[0] == 4791
    elif etype == b"\x86\xdd" and len(pkt) >= eth + 44:
        if pkt[eth + 6] == 17:
            roce += struct.unpack(">H", pkt[eth + 42:eth + 44])[0] == 4791
if off != len(data):
    sys.exit(1)
print(frames, roce, "python3")
EOF
	fi
}

read -r frames roce how < <(count || true)
if [ -n "${frames:-}" ] && [ "$frames" -gt 0 ]; then
	ok "$file is an Ethernet pcap of $frames frames (read by $how)"
else
	not_ok "$file is an Ethernet pcap with frames in it"
fi
if [ "${roce:-0}" -ge "$min" ]; then
	ok "$roce of its frames are RoCEv2 (UDP to port 4791), at least $min"
else
	not_ok "at least $min RoCEv2 frames (UDP to port 4791) in $file: ${roce:-none}"
fi
echo "1..$n"
exit $failed
