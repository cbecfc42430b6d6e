# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Part "pyverbs" of the ulp suite (sourced by suite.sh): rdma-core's
# pyverbs modules whose cases need a RoCE port, on g1's qhca0, whose port
# here is the segment's Ethernet with its RoCEv2 GIDs and an IP address on
# its net_device.  The guest suite runs every module on qhca0's InfiniBand
# port, where these cases skip: test_addr's RoCE address handle,
# test_rdmacm (rdma_cm finds the device by an IP address of its
# net_device: the tests take the first address of the interface rdma link
# names for qhca0, and run both ends in this guest), and the raw packet
# QP cases, which ask for an Ethernet link layer (test_qp's, test_flow,
# test_rss_traffic).  Whole modules, not only those cases: test_addr's
# and test_qp's others cost a second or two and run on RoCE too.  The
# same script as the guest suite's runs them
# (tests/shell/rdma-core-tests.sh); its TAP lines become the part's.
# g2 has no share in it and goes on (this is the last part).

pyverbs_modules=(test_addr test_rdmacm test_qp test_flow test_rss_traffic)

# pyverbs_run: the script's results as the part's TAP lines: its skips
# stay skips (tests/expected-skips must list them), its diagnostics stay
# diagnostics; a script that skipped as a whole, ended early or failed
# without saying which case is a failure of its own.
pyverbs_run() {
	local out rc line st what got=0 bad=0 plan="" re='^(ok|not ok) [0-9]+ (.*)$'
	local skip_re='^(.*[^ ]) *# SKIP (.*)$'
	out=$(cd "$here/../shell" && ./rdma-core-tests.sh "${pyverbs_modules[@]}" 2>&1)
	rc=$?
	while IFS= read -r line; do
		if [[ $line =~ $re ]]; then
			st=${BASH_REMATCH[1]} what=${BASH_REMATCH[2]}
			got=$((got + 1))
			if [ "$st" = "not ok" ]; then
				bad=$((bad + 1))
				not_ok "pyverbs: $what"
			elif [[ $what =~ $skip_re ]]; then
				skip "pyverbs: ${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}"
			else
				ok "pyverbs: $what"
			fi
		elif [[ $line =~ ^1\.\.([0-9]+) ]]; then
			plan=${BASH_REMATCH[1]}
			[[ $line != *SKIP* ]] || echo "# pyverbs: $line"
		elif [[ $line == '#'* ]]; then
			echo "$line"
		fi
	done <<< "$out"
	[ "$got" -gt 0 ] && [ "$got" = "$plan" ] && { [ $rc = 0 ] || [ $bad -gt 0 ]; }
	result "pyverbs: rdma-core-tests.sh reported all its $got of ${plan:-?} cases ($bad failed, exit $rc)"
}

pyverbs_part() {
	local before
	[ "$me" = g1 ] || return 0
	before=$(res_now)
	pyverbs_run
	res_back "pyverbs" "$before"
	dmesg_clean "pyverbs"
}
pyverbs_part
