// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * ibv_reg_dmabuf_mr(): an MR over the pages of a dma-buf, here one that
 * udmabuf makes of a memfd's pages.  RDMA WRITEs, READs, SENDs and
 * atomics reach the buffer through the MR's iova (chosen unlike any user
 * address), and their bytes are checked through a mapping of the memfd,
 * the same pages seen from the CPU: byte for byte, and nothing around
 * them written.  The MR holds a reference to the dma-buf (its fdinfo's
 * count) until deregistration: closing the fd leaves the MR valid; a
 * deregistered MR's key is refused, and the buffer can be registered
 * again.  A bad fd, a range past the buffer's end and bad access rights
 * are refused at registration, and keep no reference.  A new
 * translation of the MR (a raw REREG_MR) is refused; new access rights
 * take effect.
 *
 * QP 1 owns the MR and QP 0 reaches it by rkey, as in rereg_mr.c.
 * The dmabuf cases need /dev/udmabuf (CONFIG_UDMABUF): a guest kernel
 * without it lists them in tests/kernel-skips; where the device is
 * missing otherwise, they fail.  The nobuf case needs no dma-buf.
 */
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/udmabuf.h>
#include <rdma/ib_user_verbs.h>

#include "rc_pair.h"

#define PAGE		4096
#define BUF_PAGES	4
#define BUF_LEN		(BUF_PAGES * PAGE)
#define LEN		700		/* crosses a page where it is put */
/* Where the MR of the test_offset cases starts: mid-page, page 1. */
#define MR_OFF		(PAGE + 300)
#define MR_OFF_LEN	(2 * PAGE)
/* An iova no user address has: the MR is reached only through it. */
#define IOVA_BASE	0x5a5a000000000ULL

FIXTURE(dmabuf)
{
	struct rc_pair p;
	struct rc_buf local;		/* QP 0's memory */
	struct rc_buf buf;		/* the memfd's pages, mapped */
	int memfd;
	int dmabuf_fd;
	struct ibv_mr *mr;		/* over the dma-buf */
	uint64_t mr_off;		/* where in the buffer it starts */
	uint64_t iova;			/* its iova */
};

/* A dma-buf of BUF_LEN bytes over a sealed memfd, which is mapped too. */
static void make_dmabuf(struct __test_metadata *_metadata,
			FIXTURE_DATA(dmabuf) *self)
{
	struct udmabuf_create create = { .flags = UDMABUF_FLAGS_CLOEXEC };
	int dev;

	self->memfd = memfd_create("qhca-dmabuf", MFD_ALLOW_SEALING);
	ASSERT_LE(0, self->memfd) TH_LOG("memfd_create: %s", strerror(errno));
	ASSERT_EQ(0, ftruncate(self->memfd, BUF_LEN));
	/* udmabuf takes only pages that cannot go away under it. */
	ASSERT_EQ(0, fcntl(self->memfd, F_ADD_SEALS, F_SEAL_SHRINK));
	self->buf.mem = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE,
			     MAP_SHARED, self->memfd, 0);
	ASSERT_NE(MAP_FAILED, self->buf.mem);
	self->buf.size = BUF_LEN;

	dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, dev) TH_LOG("/dev/udmabuf: %s (CONFIG_UDMABUF)",
				 strerror(errno));
	create.memfd = self->memfd;
	create.size = BUF_LEN;
	self->dmabuf_fd = ioctl(dev, UDMABUF_CREATE, &create);
	EXPECT_EQ(0, close(dev));
	ASSERT_LE(0, self->dmabuf_fd) TH_LOG("UDMABUF_CREATE: %s",
					     strerror(errno));
}

/*
 * The references to the dma-buf of @fd (its fdinfo's count: fds and
 * importers such as an MR's umem), or -1.
 */
static long dmabuf_refs(int fd)
{
	char path[64], line[128];
	long count = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "count: %ld", &count) == 1)
			break;
	fclose(f);
	return count;
}

static struct ibv_mr *reg(FIXTURE_DATA(dmabuf) *self, uint64_t off,
			  size_t len, int fd, int access)
{
	return ibv_reg_dmabuf_mr(self->p.pd, off, len,
				 IOVA_BASE + off, fd, access);
}

/* The fixture's MR: [@off, @off + @len) of the buffer, with @access. */
static void reg_mr_access(struct __test_metadata *_metadata,
			  FIXTURE_DATA(dmabuf) *self, uint64_t off,
			  size_t len, int access)
{
	self->mr = reg(self, off, len, self->dmabuf_fd, access);
	ASSERT_NE(NULL, self->mr) TH_LOG("ibv_reg_dmabuf_mr(%#llx, %zu): %s",
					 (unsigned long long)off, len,
					 strerror(errno));
	self->mr_off = off;
	self->iova = IOVA_BASE + off;
	/* libibverbs reports the offset as the MR's address. */
	EXPECT_EQ((void *)(uintptr_t)off, self->mr->addr);
	EXPECT_EQ(len, self->mr->length);
}

static void reg_mr(struct __test_metadata *_metadata,
		   FIXTURE_DATA(dmabuf) *self, uint64_t off, size_t len)
{
	reg_mr_access(_metadata, self, off, len, RC_ACCESS_ALL);
}

FIXTURE_SETUP(dmabuf)
{
	struct rc_opts o;

	self->memfd = -1;
	self->dmabuf_fd = -1;
	rc_default_opts(&o);
	rc_pair_open(_metadata, &self->p, &o);
	rc_pair_connect(_metadata, &self->p);
	rc_buf_alloc(_metadata, &self->local, self->p.pd, BUF_LEN,
		     RC_ACCESS_ALL);
	make_dmabuf(_metadata, self);
}

FIXTURE_TEARDOWN(dmabuf)
{
	if (self->mr)
		EXPECT_EQ(0, ibv_dereg_mr(self->mr));
	if (self->dmabuf_fd >= 0)
		EXPECT_EQ(0, close(self->dmabuf_fd));
	if (self->buf.mem)
		EXPECT_EQ(0, munmap(self->buf.mem, BUF_LEN));
	if (self->memfd >= 0)
		EXPECT_EQ(0, close(self->memfd));
	rc_buf_free(_metadata, &self->local);
	rc_pair_close(_metadata, &self->p);
}

/* The iova of byte @at of the buffer (the MR must cover it). */
static uint64_t iova_of(FIXTURE_DATA(dmabuf) *self, size_t at)
{
	return self->iova + at - self->mr_off;
}

/*
 * One RDMA op of LEN bytes from QP 0 to byte @at of the buffer, by the
 * MR's rkey; its status.  A WRITE carries pattern @seed, a READ brings
 * back what is there into the local buffer, poisoned first.
 */
static int xfer(struct __test_metadata *_metadata, FIXTURE_DATA(dmabuf) *self,
		enum ibv_wr_opcode op, size_t at, uint32_t rkey, uint32_t seed)
{
	struct ibv_sge sge = rc_sge(&self->local, 0, LEN);
	struct ibv_wc wc;

	if (op == IBV_WR_RDMA_WRITE)
		rc_fill(self->local.mem, LEN, seed);
	else
		rc_poison(self->local.mem, LEN, seed);
	if (rc_post(self->p.s[0].qp, seed, op, IBV_SEND_SIGNALED, &sge, 1,
		    iova_of(self, at), rkey))
		return -1;
	rc_wait_wc(_metadata, self->p.s[0].scq, &wc);
	EXPECT_EQ((uint64_t)seed, wc.wr_id);
	return wc.status;
}

/*
 * A WRITE to byte @at of the buffer, which must then hold it byte for
 * byte with every other byte untouched, and a READ of new bytes there.
 */
static void write_read(struct __test_metadata *_metadata,
		       FIXTURE_DATA(dmabuf) *self, size_t at, uint32_t seed)
{
	rc_prepare_dst(&self->buf, at, LEN, seed);
	ASSERT_EQ(IBV_WC_SUCCESS, xfer(_metadata, self, IBV_WR_RDMA_WRITE, at,
				       self->mr->rkey, seed));
	RC_EXPECT_DELIVERED(&self->buf, at, LEN, seed);

	rc_fill(self->buf.mem + at, LEN, seed + 7);
	ASSERT_EQ(IBV_WC_SUCCESS, xfer(_metadata, self, IBV_WR_RDMA_READ, at,
				       self->mr->rkey, seed + 7));
	RC_EXPECT_PATTERN(self->local.mem, LEN, seed + 7);
}

/* A WRITE at @at is refused, and nothing of the buffer is written. */
static void write_refused(struct __test_metadata *_metadata,
			  FIXTURE_DATA(dmabuf) *self, size_t at,
			  uint32_t rkey, uint32_t seed)
{
	rc_poison(self->buf.mem, BUF_LEN, seed + 1);
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  xfer(_metadata, self, IBV_WR_RDMA_WRITE, at, rkey, seed));
	RC_EXPECT_POISON(self->buf.mem, BUF_LEN, seed + 1);
}

/* The whole buffer: the first bytes, across each page, the last ones. */
TEST_F_TIMEOUT(dmabuf, write_read, 120)
{
	reg_mr(_metadata, self, 0, BUF_LEN);
	write_read(_metadata, self, 0, 1);
	write_read(_metadata, self, PAGE - 100, 2);
	write_read(_metadata, self, 2 * PAGE - 300, 3);
	write_read(_metadata, self, BUF_LEN - LEN, 4);
	/* The buffer's last byte is the MR's last. */
	write_refused(_metadata, self, BUF_LEN - LEN + 1, self->mr->rkey, 5);
}

/*
 * An MR from mid-page 1 of the buffer: its first byte is the buffer's
 * byte MR_OFF, and the bytes before and after it are out of reach.
 */
TEST_F_TIMEOUT(dmabuf, offset, 120)
{
	reg_mr(_metadata, self, MR_OFF, MR_OFF_LEN);
	write_read(_metadata, self, MR_OFF, 6);
	write_read(_metadata, self, 2 * PAGE - 200, 7);
	write_read(_metadata, self, MR_OFF + MR_OFF_LEN - LEN, 8);
	write_refused(_metadata, self, MR_OFF + MR_OFF_LEN - LEN + 1,
		      self->mr->rkey, 9);
}

/* The byte before the MR's first: refused. */
TEST_F_TIMEOUT(dmabuf, offset_before, 120)
{
	reg_mr(_metadata, self, MR_OFF, MR_OFF_LEN);
	write_refused(_metadata, self, MR_OFF - 1, self->mr->rkey, 10);
}

/* A SEND lands in a receive buffer of the MR, by its lkey. */
TEST_F_TIMEOUT(dmabuf, send, 120)
{
	size_t at = MR_OFF + 500;
	struct ibv_sge rsge = {
		.length = LEN,
	};
	struct ibv_sge sge = rc_sge(&self->local, 0, LEN);

	reg_mr(_metadata, self, MR_OFF, MR_OFF_LEN);
	rsge.addr = iova_of(self, at);
	rsge.lkey = self->mr->lkey;
	rc_prepare_dst(&self->buf, at, LEN, 11);
	ASSERT_EQ(0, rc_post_recv(self->p.s[1].qp, 12, &rsge, 1));
	rc_fill(self->local.mem, LEN, 11);
	ASSERT_EQ(0, rc_post(self->p.s[0].qp, 13, IBV_WR_SEND,
			     IBV_SEND_SIGNALED, &sge, 1, 0, 0));
	RC_WAIT_WC(self->p.s[0].scq, 13, IBV_WC_SUCCESS, IBV_WC_SEND);
	RC_WAIT_WC(self->p.s[1].rcq, 12, IBV_WC_SUCCESS, IBV_WC_RECV);
	RC_EXPECT_DELIVERED(&self->buf, at, LEN, 11);

	/* And out of it: the MR as the SEND's source. */
	sge.addr = iova_of(self, at);
	sge.lkey = self->mr->lkey;
	rc_fill(self->buf.mem + at, LEN, 14);
	rc_prepare_dst(&self->local, 0, LEN, 14);
	rsge = rc_sge(&self->local, 0, LEN);
	ASSERT_EQ(0, rc_post_recv(self->p.s[0].qp, 15, &rsge, 1));
	ASSERT_EQ(0, rc_post(self->p.s[1].qp, 16, IBV_WR_SEND,
			     IBV_SEND_SIGNALED, &sge, 1, 0, 0));
	RC_WAIT_WC(self->p.s[1].scq, 16, IBV_WC_SUCCESS, IBV_WC_SEND);
	RC_WAIT_WC(self->p.s[0].rcq, 15, IBV_WC_SUCCESS, IBV_WC_RECV);
	RC_EXPECT_DELIVERED(&self->local, 0, LEN, 14);
}

/* A fetch-and-add and a compare-and-swap on a word of the buffer. */
TEST_F_TIMEOUT(dmabuf, atomic, 120)
{
	size_t at = 2 * PAGE + 64;	/* 8-byte aligned, in page 2 */
	uint64_t *word = (uint64_t *)(self->buf.mem + at);
	uint64_t *res = (uint64_t *)self->local.mem;
	struct ibv_sge sge = rc_sge(&self->local, 0, 8);

	reg_mr(_metadata, self, MR_OFF, MR_OFF_LEN);
	rc_prepare_dst(&self->buf, at, 8, 17);
	*word = 0x00000000fffffffeULL;
	*res = 0x5a5a5a5a5a5a5a5aULL;
	ASSERT_EQ(0, rc_post_atomic(self->p.s[0].qp, 18,
				    IBV_WR_ATOMIC_FETCH_AND_ADD,
				    IBV_SEND_SIGNALED, &sge,
				    iova_of(self, at), self->mr->rkey, 3, 0));
	RC_WAIT_WC(self->p.s[0].scq, 18, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD);
	EXPECT_EQ(0x00000000fffffffeULL, *res);
	EXPECT_EQ(0x0000000100000001ULL, *word);

	ASSERT_EQ(0, rc_post_atomic(self->p.s[0].qp, 19,
				    IBV_WR_ATOMIC_CMP_AND_SWP,
				    IBV_SEND_SIGNALED, &sge,
				    iova_of(self, at), self->mr->rkey,
				    0x0000000100000001ULL,
				    0x0123456789abcdefULL));
	RC_WAIT_WC(self->p.s[0].scq, 19, IBV_WC_SUCCESS, IBV_WC_COMP_SWAP);
	EXPECT_EQ(0x0000000100000001ULL, *res);
	EXPECT_EQ(0x0123456789abcdefULL, *word);
	/* Nothing but the word changed. */
	RC_EXPECT_POISON(self->buf.mem, at, 18);
	RC_EXPECT_POISON(self->buf.mem + at + 8, BUF_LEN - at - 8, 19);
}

/* The MR holds the dma-buf: its fd closed, the MR still reaches it. */
TEST_F_TIMEOUT(dmabuf, fd_closed, 120)
{
	reg_mr(_metadata, self, 0, BUF_LEN);
	ASSERT_EQ(0, close(self->dmabuf_fd));
	self->dmabuf_fd = -1;
	write_read(_metadata, self, PAGE + 8, 20);
	write_read(_metadata, self, BUF_LEN - LEN, 21);
}

/*
 * An MR holds a reference to the dma-buf until it is deregistered; its
 * key is refused then, and the buffer registers again.
 */
TEST_F_TIMEOUT(dmabuf, dereg_reuse, 120)
{
	long refs = dmabuf_refs(self->dmabuf_fd);
	uint32_t old_rkey;

	ASSERT_LT(0, refs);
	reg_mr(_metadata, self, 0, BUF_LEN);
	EXPECT_LT(refs, dmabuf_refs(self->dmabuf_fd));
	write_read(_metadata, self, 100, 22);
	old_rkey = self->mr->rkey;
	ASSERT_EQ(0, ibv_dereg_mr(self->mr));
	self->mr = NULL;
	EXPECT_EQ(refs, dmabuf_refs(self->dmabuf_fd));

	reg_mr(_metadata, self, 0, BUF_LEN);
	EXPECT_NE(old_rkey, self->mr->rkey);
	write_read(_metadata, self, 200, 23);
	/* Last: the refusal takes QP 0 to the error state. */
	write_refused(_metadata, self, 0, old_rkey, 24);
}

/*
 * REREG_MR of the fixture's MR by hand: libibverbs' ibv_rereg_mr()
 * refuses any MR but a plain one before the kernel sees it, so this is
 * what only a raw command (or another library) can ask.  The flags are
 * libibverbs' (the kernel's IB_MR_REREG_* values).  write()'s result.
 */
static ssize_t rereg_raw(FIXTURE_DATA(dmabuf) *self, __u32 flags,
			 void *start, size_t len, int access,
			 struct ib_uverbs_rereg_mr_resp *resp)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_rereg_mr cmd;
	} req = {
		.hdr = {
			.command = IB_USER_VERBS_CMD_REREG_MR,
			.in_words = sizeof(req) / 4,
			.out_words = sizeof(*resp) / 4,
		},
		.cmd = {
			.response = (uintptr_t)resp,
			.mr_handle = self->mr->handle,
			.flags = flags,
			.start = (uintptr_t)start,
			.length = len,
			.hca_va = (uintptr_t)start,
			.access_flags = access,
		},
	};

	return write(self->p.ctx->cmd_fd, &req, sizeof(req));
}

/*
 * Re-registration of a dma-buf MR: a new translation (user memory) is
 * EOPNOTSUPP and leaves the MR as it was; new access rights take effect,
 * read-only to writable included (a dma-buf is mapped for both
 * directions whatever the access), and the keys stay.
 */
TEST_F_TIMEOUT(dmabuf, rereg, 120)
{
	struct ib_uverbs_rereg_mr_resp resp;
	uint8_t *user;

	ASSERT_EQ(0, posix_memalign((void **)&user, PAGE, PAGE));
	reg_mr_access(_metadata, self, 0, BUF_LEN, IBV_ACCESS_REMOTE_READ);
	errno = 0;
	EXPECT_EQ(-1, rereg_raw(self, IBV_REREG_MR_CHANGE_TRANSLATION, user,
				PAGE, 0, &resp));
	EXPECT_EQ(EOPNOTSUPP, errno);
	free(user);
	rc_fill(self->buf.mem + 100, LEN, 30);
	ASSERT_EQ(IBV_WC_SUCCESS, xfer(_metadata, self, IBV_WR_RDMA_READ, 100,
				       self->mr->rkey, 30));
	RC_EXPECT_PATTERN(self->local.mem, LEN, 30);

	memset(&resp, 0, sizeof(resp));
	ASSERT_EQ((ssize_t)(sizeof(struct ib_uverbs_cmd_hdr) +
			    sizeof(struct ib_uverbs_rereg_mr)),
		  rereg_raw(self, IBV_REREG_MR_CHANGE_ACCESS, NULL, 0,
			    RC_ACCESS_ALL, &resp))
		TH_LOG("REREG_MR: %s", strerror(errno));
	EXPECT_EQ(self->mr->lkey, resp.lkey);
	EXPECT_EQ(self->mr->rkey, resp.rkey);
	write_read(_metadata, self, PAGE - 100, 31);

	/* Read-only again: WRITEs refused (last: QP 0 is in error then). */
	ASSERT_EQ((ssize_t)(sizeof(struct ib_uverbs_cmd_hdr) +
			    sizeof(struct ib_uverbs_rereg_mr)),
		  rereg_raw(self, IBV_REREG_MR_CHANGE_ACCESS, NULL, 0,
			    IBV_ACCESS_REMOTE_READ, &resp))
		TH_LOG("REREG_MR: %s", strerror(errno));
	write_refused(_metadata, self, PAGE, self->mr->rkey, 32);
}

/*
 * A registration that must fail with @expected; one that succeeds is
 * undone, so that only the wrong result fails the test.
 */
static void reg_fails(struct __test_metadata *_metadata, struct ibv_pd *pd,
		      int expected, uint64_t off, size_t len, uint64_t iova,
		      int fd, int access)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_dmabuf_mr(pd, off, len, iova, fd, access);
	EXPECT_EQ(NULL, mr) TH_LOG("off %#llx len %zu fd %d access %#x: "
				   "registered", (unsigned long long)off,
				   len, fd, access);
	if (mr) {
		EXPECT_EQ(0, ibv_dereg_mr(mr));
		return;
	}
	EXPECT_EQ(expected, errno)
		TH_LOG("off %#llx len %zu fd %d access %#x: %s",
		       (unsigned long long)off, len, fd, access,
		       strerror(errno));
}

/* Registrations that must fail, and leave nothing behind. */
TEST_F(dmabuf, errors)
{
	int fd = self->dmabuf_fd;
	long refs = dmabuf_refs(fd);

	ASSERT_LT(0, refs);

	/* Past the buffer's end, by a byte or all of it; and empty. */
	reg_fails(_metadata, self->p.pd, EINVAL, 0, BUF_LEN + 1, IOVA_BASE, fd,
		  RC_ACCESS_ALL);
	reg_fails(_metadata, self->p.pd, EINVAL, PAGE, BUF_LEN, IOVA_BASE, fd,
		  RC_ACCESS_ALL);
	reg_fails(_metadata, self->p.pd, EINVAL, BUF_LEN, PAGE, IOVA_BASE, fd,
		  RC_ACCESS_ALL);
	reg_fails(_metadata, self->p.pd, EINVAL, 0, 0, IOVA_BASE, fd,
		  RC_ACCESS_ALL);
	/* An offset whose end wraps around. */
	reg_fails(_metadata, self->p.pd, EINVAL, -(uint64_t)PAGE, 2 * PAGE,
		  IOVA_BASE, fd, RC_ACCESS_ALL);
	/* Remote writes to memory that may not be written locally. */
	reg_fails(_metadata, self->p.pd, EINVAL, 0, BUF_LEN, IOVA_BASE, fd,
		  IBV_ACCESS_REMOTE_WRITE);
	/* The iova's offset in its page must be the buffer offset's. */
	reg_fails(_metadata, self->p.pd, EINVAL, 0, PAGE, IOVA_BASE + 8, fd,
		  RC_ACCESS_ALL);
	/* No reference kept; rc_pair_close() checks the device's MRs. */
	EXPECT_EQ(refs, dmabuf_refs(fd));
}

/*
 * Without a dma-buf (so also where the kernel has no udmabuf): no fd, and
 * fds of other files, reach the driver's op and are refused.
 */
FIXTURE(nobuf)
{
	struct rc_pair p;
};

FIXTURE_SETUP(nobuf)
{
	struct rc_opts o;

	rc_default_opts(&o);
	rc_pair_open(_metadata, &self->p, &o);
}

FIXTURE_TEARDOWN(nobuf)
{
	rc_pair_close(_metadata, &self->p);
}

TEST_F(nobuf, not_a_dmabuf)
{
	int fd;

	reg_fails(_metadata, self->p.pd, EBADF, 0, PAGE, IOVA_BASE, -1,
		  RC_ACCESS_ALL);
	/* An fd, but no dma-buf: a memfd, /dev/null. */
	fd = memfd_create("qhca-nobuf", 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, PAGE));
	reg_fails(_metadata, self->p.pd, EINVAL, 0, PAGE, IOVA_BASE, fd,
		  RC_ACCESS_ALL);
	EXPECT_EQ(0, close(fd));
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	reg_fails(_metadata, self->p.pd, EINVAL, 0, PAGE, IOVA_BASE, fd,
		  RC_ACCESS_ALL);
	EXPECT_EQ(0, close(fd));
}

TEST_HARNESS_MAIN
