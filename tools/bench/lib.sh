# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
#
# Helpers shared by the bench scripts (perf-matrix, wire-matrix), sourced
# on the host and in the guest: reading perftest's output, combining runs,
# comparing devices.

# result_line: perftest's result line, the first line that starts with a
# number and has at least four fields (the header lines start with '#').
result_line() { awk '$1 ~ /^[0-9]+$/ && NF >= 4 { print; exit }'; }

# median: the median of the numbers on stdin, one a line ("-" for none);
# the mean of the middle two for an even count.
median() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "-"; exit }
		if (NR % 2) print v[(NR + 1) / 2]
		else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# ratio A B HIGHER_IS_BETTER: how many times better A is than B ("-" when
# either is missing or zero): A/B for a rate, B/A for a latency.
ratio() {
	awk -v a="$1" -v b="$2" -v up="$3" 'BEGIN {
		if (a == "" || b == "" || a + 0 == 0 || b + 0 == 0) { print "-"; exit }
		printf "%.1fx", up ? a / b : b / a }'
}
