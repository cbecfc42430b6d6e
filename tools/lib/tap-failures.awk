# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# tap-failures.awk: every "not ok" line of a suite's TAP, each followed by
# the last lines (at most `keep', default 8) its test printed before it,
# indented by four spaces.  CI shows only the end of make check's output:
# with these lines there, a failure says why without the TAP file.
#
# The lines of a test are those since the test before it.  In a suite of
# several guests (tools/vm --guests) the guests' lines interleave: each is
# "NAME: ..." and each result's description starts with "NAME: ", so a
# failure takes the lines of its own guest since that guest's last result.
# A console line of the kernel ("[ 12.345] ...") says nothing of the test.
# A guest whose whole run stopped early (tools/check's "its run stopped
# before its end") gets `keep_stopped' lines, default 30: tools/vm's account
# and the end of the guest's console, where a panic or an abort shows.

function guest_of(s) {
	return match(s, /^[A-Za-z][A-Za-z0-9_-]*: /) ? substr(s, 1, RLENGTH - 2) : ""
}

function flush(key, lines, n, i, first) {
	n = count[key]
	first = n > lines ? n - lines + 1 : 1
	for (i = first; i <= n; i++)
		print "    " buf[key, i]
}

function forget(key) {
	count[key] = 0
}

BEGIN {
	if (keep == "")
		keep = 8
	if (keep_stopped == "")
		keep_stopped = 30
}

/^(not )?ok( |$)/ {
	desc = $0
	sub(/^(not )?ok *[0-9]* *(- )?/, "", desc)
	g = guest_of(desc)
	if ($0 ~ /^not ok/) {
		print
		flush(count[g] > 0 ? g : "",
		      desc ~ /its run stopped before its end/ ? keep_stopped : keep)
	}
	forget(g)
	forget("")
	next
}

{
	line = $0
	g = guest_of(line)
	if (g != "")
		line = substr(line, length(g) + 3)
	if (line ~ /^\[ *[0-9]+\.[0-9]+\]/ || line ~ /^[[:space:]]*$/)
		next
	count[g]++
	buf[g, count[g]] = line
	if (g != "") {
		count[""]++
		buf["", count[""]] = g ": " line
	}
}
