// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * segment-hub: the Ethernet segment of tools/vm --guests, a hub on a Unix
 * socket that QEMU's standard stream netdev connects to
 * (-netdev stream,addr.type=unix,addr.path=PATH).  Every frame one port
 * sends goes to every other port, as on the multicast bus it replaces, so a
 * capture on one guest's netdev (filter-dump) still sees the whole segment.
 *
 * Why not the multicast bus (-netdev socket,mcast=): each QEMU reads its UDP
 * socket one datagram per main-loop iteration, with the kernel's default
 * receive buffer (about 100 frames of 1 KiB), so a burst the size of one
 * RC window or one 64 KiB READ response is partly lost whenever the host
 * is busy: the host counted 16% of the bus's datagrams as RcvbufErrors.
 * Real RoCE fabrics do not lose a burst of that size.  Here a port that
 * is slow to read has its frames queued (up to HUB_QUEUE_MAX bytes), over a
 * stream socket that itself loses nothing; only past that are frames for
 * it dropped, and counted.  A port that sends is never stopped, so no
 * guest can stall another by not reading.
 *
 * Frames on the stream are as QEMU's stream netdev sends them: a 32-bit
 * big-endian length, then the frame.
 *
 * Usage: segment-hub PATH: listens on PATH until it gets SIGTERM, then
 * prints what it forwarded and dropped on stderr.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define HUB_PORTS	16
/* Larger than any frame a port sends: a 9000-byte MTU and headers. */
#define HUB_FRAME_MAX	65536
/* Per port: a 16 MiB backlog is well past any burst the transports make. */
#define HUB_QUEUE_MAX	(16u << 20)

struct hub_buf {
	uint8_t *data;
	size_t len, cap;
};

struct hub_port {
	int fd;
	struct hub_buf in, out;
	size_t out_off;			/* bytes of out already written */
	unsigned long long rx_frames, tx_frames, dropped;
};

static struct hub_port ports[HUB_PORTS];
static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static void buf_append(struct hub_buf *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 65536;

		while (cap < b->len + n)
			cap *= 2;
		b->data = realloc(b->data, cap);
		if (!b->data) {
			perror("segment-hub: realloc");
			exit(1);
		}
		b->cap = cap;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

static void port_close(struct hub_port *p)
{
	close(p->fd);
	free(p->in.data);
	free(p->out.data);
	memset(p, 0, sizeof(*p));
	p->fd = -1;
}

/* Queue one frame (with its length word) to every port but @from. */
static void hub_forward(int from, const uint8_t *rec, size_t n)
{
	int i;

	for (i = 0; i < HUB_PORTS; i++) {
		struct hub_port *p = &ports[i];

		if (i == from || p->fd < 0)
			continue;
		if (p->out.len - p->out_off + n > HUB_QUEUE_MAX) {
			p->dropped++;
			continue;
		}
		buf_append(&p->out, rec, n);
		p->tx_frames++;
	}
}

/* Read what port @i sent; forward every whole frame.  False at its end. */
static int port_read(int i)
{
	struct hub_port *p = &ports[i];
	uint8_t buf[65536];
	size_t off = 0;
	ssize_t n;

	n = read(p->fd, buf, sizeof(buf));
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
		return 0;
	if (n < 0)
		return 1;
	buf_append(&p->in, buf, n);
	while (p->in.len - off >= 4) {
		uint32_t len;

		memcpy(&len, p->in.data + off, 4);
		len = ntohl(len);
		if (len > HUB_FRAME_MAX) {
			fprintf(stderr, "segment-hub: port %d sent a %u-byte frame\n",
				i, len);
			return 0;
		}
		if (p->in.len - off < 4 + (size_t)len)
			break;
		hub_forward(i, p->in.data + off, 4 + len);
		p->rx_frames++;
		off += 4 + len;
	}
	memmove(p->in.data, p->in.data + off, p->in.len - off);
	p->in.len -= off;
	return 1;
}

/* Write what waits for port @i.  False if the port is gone. */
static int port_write(int i)
{
	struct hub_port *p = &ports[i];
	ssize_t n = write(p->fd, p->out.data + p->out_off,
			  p->out.len - p->out_off);

	if (n < 0)
		return errno == EAGAIN || errno == EINTR;
	p->out_off += n;
	if (p->out_off == p->out.len) {
		p->out.len = 0;
		p->out_off = 0;
	} else if (p->out_off > HUB_QUEUE_MAX) {
		memmove(p->out.data, p->out.data + p->out_off,
			p->out.len - p->out_off);
		p->out.len -= p->out_off;
		p->out_off = 0;
	}
	return 1;
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct pollfd pfd[HUB_PORTS + 1];
	int slot[HUB_PORTS];		/* port i's entry in pfd, or 0 */
	int lfd, i;

	if (argc != 2 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: segment-hub PATH\n");
		return 2;
	}
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < HUB_PORTS; i++)
		ports[i].fd = -1;
	strcpy(sa.sun_path, argv[1]);
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(lfd, HUB_PORTS)) {
		perror("segment-hub: listen");
		return 1;
	}
	while (!stop) {
		int nfd = 1;

		pfd[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		for (i = 0; i < HUB_PORTS; i++) {
			struct hub_port *p = &ports[i];

			slot[i] = 0;
			if (p->fd < 0)
				continue;
			slot[i] = nfd;
			pfd[nfd++] = (struct pollfd){
				.fd = p->fd,
				.events = POLLIN |
					  (p->out.len > p->out_off ? POLLOUT : 0),
			};
		}
		if (poll(pfd, nfd, 1000) < 0) {
			if (errno == EINTR)
				continue;
			perror("segment-hub: poll");
			return 1;
		}
		if (pfd[0].revents & POLLIN) {
			int fd = accept(lfd, NULL, NULL);

			for (i = 0; fd >= 0 && i < HUB_PORTS; i++) {
				if (ports[i].fd < 0) {
					fcntl(fd, F_SETFL, O_NONBLOCK);
					ports[i].fd = fd;
					fd = -1;
				}
			}
			if (fd >= 0)
				close(fd);
		}
		for (i = 0; i < HUB_PORTS; i++) {
			struct hub_port *p = &ports[i];
			short ev;

			/* Accepted in this round: polled from the next. */
			if (p->fd < 0 || !slot[i])
				continue;
			ev = pfd[slot[i]].revents;
			if ((ev & POLLOUT) && !port_write(i)) {
				port_close(p);
				continue;
			}
			if ((ev & (POLLIN | POLLHUP | POLLERR)) && !port_read(i))
				port_close(p);
		}
	}
	for (i = 0; i < HUB_PORTS; i++) {
		if (ports[i].rx_frames || ports[i].dropped)
			fprintf(stderr, "segment-hub: port %d: %llu frames sent, %llu received, %llu dropped (its backlog full)\n",
				i, ports[i].rx_frames, ports[i].tx_frames,
				ports[i].dropped);
	}
	unlink(argv[1]);
	return 0;
}
