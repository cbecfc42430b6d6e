// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The driver's side of the uverbs ABI, driven by hand through write() on
 * /dev/infiniband/uverbsN the way a hostile or broken provider could:
 * short and oversized buffers, unknown comp_mask bits, reserved fields,
 * mmap() of pages the context was never given, double frees.  Each bad
 * input must fail with the errno given here and leave nothing behind.
 *
 * Who answers what: verify_hdr() in ib_uverbs_write() rejects a core
 * response buffer shorter than the core response with ENOSPC before any
 * driver code runs; uobject lookups fail with ENOENT (EINVAL for a handle
 * of an object of another type); everything inside the
 * driver data is the driver's (rdma/qhca-abi.h: unknown comp_mask bits,
 * non-zero reserved fields and non-zero excess bytes are EINVAL, and a
 * response is truncated to what user space offered).
 */
#include <dirent.h>
#include <stdint.h>
#include <sys/mman.h>

#include <rdma/ib_user_verbs.h>
#include <rdma/qhca-abi.h>
#include <qhca_hw.h>

#include "qhca_test.h"

#define CANARY		0xa5
#define BAD_HANDLE	12345

/* Response buffers: core part, driver part, then bytes nobody may touch. */
struct get_context_resp {
	struct ib_uverbs_get_context_resp core;
	struct qhca_ibv_alloc_ucontext_resp drv;
	__u8 tail[64];
};

struct alloc_pd_resp {
	struct ib_uverbs_alloc_pd_resp core;
	struct qhca_ibv_alloc_pd_resp drv;
	__u8 tail[64];
};

/* The character device of qhca0, from the uverbs class in sysfs. */
static int qhca_uverbs_path(char *path, size_t size)
{
	static const char class[] = "/sys/class/infiniband_verbs";
	char file[512], ibdev[64];
	struct dirent *de;
	int ret = -ENODEV;
	DIR *dir;

	dir = opendir(class);
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		if (strncmp(de->d_name, "uverbs", 6))
			continue;
		snprintf(file, sizeof(file), "%s/%s/ibdev", class, de->d_name);
		if (qhca_read_sysfs_str(file, ibdev, sizeof(ibdev)) < 0 ||
		    strcmp(ibdev, QHCA_IBDEV))
			continue;
		if (snprintf(path, size, "/dev/infiniband/%s",
			     de->d_name) >= (int)size)
			ret = -ENAMETOOLONG;
		else
			ret = 0;
		break;
	}
	closedir(dir);
	return ret;
}

/*
 * One legacy write() command: the header, the core request (which starts
 * with the response pointer when the command has one) and the driver's
 * request.  Lengths are in bytes and must be multiples of 4, as in_words
 * and out_words count 32-bit words.
 */
static ssize_t uverbs_cmd(int fd, __u32 command, const void *core,
			  size_t core_len, const void *drv, size_t drv_len,
			  size_t out_len)
{
	__u8 buf[256] __attribute__((aligned(8)));
	struct ib_uverbs_cmd_hdr hdr = {
		.command = command,
		.in_words = (sizeof(hdr) + core_len + drv_len) / 4,
		.out_words = out_len / 4,
	};

	if (sizeof(hdr) + core_len + drv_len > sizeof(buf)) {
		errno = E2BIG;
		return -1;
	}
	memcpy(buf, &hdr, sizeof(hdr));
	memcpy(buf + sizeof(hdr), core, core_len);
	if (drv_len)
		memcpy(buf + sizeof(hdr) + core_len, drv, drv_len);
	return write(fd, buf, sizeof(hdr) + core_len + drv_len);
}

static ssize_t get_context(int fd, const void *req, size_t req_len,
			   struct get_context_resp *resp, size_t out_len)
{
	struct ib_uverbs_get_context cmd = {
		.response = (uintptr_t)resp,
	};

	memset(resp, CANARY, sizeof(*resp));
	return uverbs_cmd(fd, IB_USER_VERBS_CMD_GET_CONTEXT, &cmd, sizeof(cmd),
			  req, req_len, out_len);
}

static ssize_t alloc_pd(int fd, const void *req, size_t req_len,
			struct alloc_pd_resp *resp, size_t out_len)
{
	struct ib_uverbs_alloc_pd cmd = {
		.response = (uintptr_t)resp,
	};

	memset(resp, CANARY, sizeof(*resp));
	return uverbs_cmd(fd, IB_USER_VERBS_CMD_ALLOC_PD, &cmd, sizeof(cmd),
			  req, req_len, out_len);
}

static ssize_t dealloc_pd(int fd, __u32 handle)
{
	struct ib_uverbs_dealloc_pd cmd = {
		.pd_handle = handle,
	};

	return uverbs_cmd(fd, IB_USER_VERBS_CMD_DEALLOC_PD, &cmd, sizeof(cmd),
			  NULL, 0, 0);
}

/* True if the bytes from offset on still hold the canary. */
static bool untouched(const void *buf, size_t offset, size_t size)
{
	const __u8 *p = buf;

	for (; offset < size; offset++)
		if (p[offset] != CANARY)
			return false;
	return true;
}

static const struct qhca_ibv_alloc_ucontext_req good_req;

FIXTURE(raw)
{
	char path[64];
	int fd;
	int async_fd;
	struct qhca_objs base;
	struct get_context_resp ctx;
	void *db;
};

FIXTURE_SETUP(raw)
{
	self->async_fd = -1;
	self->db = MAP_FAILED;
	ASSERT_EQ(0, qhca_uverbs_path(self->path, sizeof(self->path)))
		TH_LOG("no uverbs device for " QHCA_IBDEV);
	self->fd = open(self->path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("%s: %s", self->path, strerror(errno));
	ASSERT_EQ(0, qhca_read_objs(&self->base))
		TH_LOG("no object counters in " QHCA_SYSFS_HW_OBJECTS);
}

FIXTURE_TEARDOWN(raw)
{
	if (self->db != MAP_FAILED)
		munmap(self->db, QHCA_DB_PAGE_SIZE);
	if (self->async_fd >= 0)
		close(self->async_fd);
	if (self->fd >= 0)
		close(self->fd);
	QHCA_EXPECT_OBJS_AT(self->base);
}

/* A context the way libqhca makes one; remembers what to close. */
#define OPEN_CONTEXT() do {						\
	ASSERT_EQ((ssize_t)(sizeof(struct ib_uverbs_cmd_hdr) +		\
			    sizeof(struct ib_uverbs_get_context) +	\
			    sizeof(good_req)),				\
		  get_context(self->fd, &good_req, sizeof(good_req),	\
			      &self->ctx, sizeof(self->ctx.core) +	\
			      sizeof(self->ctx.drv)))			\
		TH_LOG("GET_CONTEXT: %s", strerror(errno));		\
	self->async_fd = self->ctx.core.async_fd;			\
} while (0)

/* This many more doorbell pages and PDs than at the start, nothing else. */
static void expect_objs(struct __test_metadata *_metadata,
			const struct qhca_objs *base, long uars, long pds)
{
	QHCA_EXPECT_OBJS(*base, "uars%+ld pds%+ld", uars, pds);
}

TEST_F(raw, get_context)
{
	const struct qhca_ibv_alloc_ucontext_resp *drv = &self->ctx.drv;

	OPEN_CONTEXT();
	EXPECT_LE(0, (int)self->ctx.core.async_fd);
	EXPECT_LE(0, fcntl((int)self->ctx.core.async_fd, F_GETFD));
	EXPECT_LE(1U, self->ctx.core.num_comp_vectors);

	EXPECT_EQ(0U, drv->comp_mask);
	EXPECT_EQ(0U, drv->reserved);
	EXPECT_EQ(QHCA_DB_PAGE_SIZE, drv->db_page_size);
	EXPECT_GT((__u32)QHCA_DEFAULT_MAX_UARS, drv->uar_index);
	EXPECT_EQ(256U, drv->max_inline_data);
	EXPECT_EQ((__u32)QHCA_VERSION_CURRENT, drv->hw_version);
	/* An mmap() offset is a whole number of pages. */
	EXPECT_EQ(0ULL, drv->db_mmap_key % QHCA_DB_PAGE_SIZE);
	EXPECT_TRUE(untouched(&self->ctx, sizeof(self->ctx.core) +
			      sizeof(self->ctx.drv), sizeof(self->ctx)));

	expect_objs(_metadata, &self->base, 1, 0);
}

TEST_F(raw, get_context_twice)
{
	struct get_context_resp again;

	OPEN_CONTEXT();
	/* One context per file; the second must not leak a page. */
	EXPECT_ERRNO(EINVAL, get_context(self->fd, &good_req, sizeof(good_req),
					 &again, sizeof(again.core) +
					 sizeof(again.drv)));
	expect_objs(_metadata, &self->base, 1, 0);
}

TEST_F(raw, get_context_core_response_short)
{
	struct get_context_resp resp;

	/* Not even room for the core response: the core refuses it. */
	EXPECT_ERRNO(ENOSPC, get_context(self->fd, &good_req, sizeof(good_req),
					 &resp, sizeof(resp.core) - 4));
	EXPECT_ERRNO(ENOSPC, get_context(self->fd, &good_req, sizeof(good_req),
					 &resp, 0));
	EXPECT_TRUE(untouched(&resp, 0, sizeof(resp)));
	expect_objs(_metadata, &self->base, 0, 0);

	/* The file is not spoiled by it. */
	OPEN_CONTEXT();
}

TEST_F(raw, get_context_bad_response_pointer)
{
	struct ib_uverbs_get_context cmd = { .response = 8 };

	EXPECT_ERRNO(EFAULT, uverbs_cmd(self->fd, IB_USER_VERBS_CMD_GET_CONTEXT,
					&cmd, sizeof(cmd), &good_req,
					sizeof(good_req),
					sizeof(struct get_context_resp) - 64));
	expect_objs(_metadata, &self->base, 0, 0);
	OPEN_CONTEXT();
}

TEST_F(raw, get_context_driver_response_short)
{
	size_t core = sizeof(self->ctx.core);

	/*
	 * An older provider's shorter response: the driver fills what fits
	 * and writes nothing past it.
	 */
	ASSERT_LT(0, get_context(self->fd, &good_req, sizeof(good_req),
				 &self->ctx, core + 8))
		TH_LOG("GET_CONTEXT with 8 bytes of driver response: %s",
		       strerror(errno));
	self->async_fd = self->ctx.core.async_fd;
	EXPECT_EQ(0U, self->ctx.drv.comp_mask);
	EXPECT_GT((__u32)QHCA_DEFAULT_MAX_UARS, self->ctx.drv.uar_index);
	EXPECT_TRUE(untouched(&self->ctx, core + 8, sizeof(self->ctx)));
	expect_objs(_metadata, &self->base, 1, 0);
}

TEST_F(raw, get_context_request_longer_zero)
{
	__u8 req[sizeof(good_req) + 16] = { 0 };

	/* A newer provider's longer request is fine while the excess is 0. */
	ASSERT_LT(0, get_context(self->fd, req, sizeof(req), &self->ctx,
				 sizeof(self->ctx.core) + sizeof(self->ctx.drv)))
		TH_LOG("GET_CONTEXT with zero excess: %s", strerror(errno));
	self->async_fd = self->ctx.core.async_fd;
	EXPECT_EQ(QHCA_DB_PAGE_SIZE, self->ctx.drv.db_page_size);
	expect_objs(_metadata, &self->base, 1, 0);
}

TEST_F(raw, mmap_doorbell_page)
{
	__u64 key;
	void *p;

	OPEN_CONTEXT();
	key = self->ctx.drv.db_mmap_key;

	self->db = mmap(NULL, QHCA_DB_PAGE_SIZE, PROT_READ | PROT_WRITE,
			MAP_SHARED, self->fd, key);
	ASSERT_NE(MAP_FAILED, self->db) TH_LOG("mmap of the doorbell page: %s",
					       strerror(errno));
	/* Doorbell pages read as zero (spec, "Doorbell pages"). */
	EXPECT_EQ(0U, *(volatile __u32 *)self->db);

	/* Two pages at the key: the context has only one. */
	errno = 0;
	p = mmap(NULL, 2 * QHCA_DB_PAGE_SIZE, PROT_READ | PROT_WRITE,
		 MAP_SHARED, self->fd, key);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	if (p != MAP_FAILED)
		munmap(p, 2 * QHCA_DB_PAGE_SIZE);
}

TEST_F(raw, mmap_bad)
{
	static const struct {
		const char *what;
		__u64 offset_pages;	/* from the key */
		int prot;
		int flags;
		int err;
	} bad[] = {
		{ "the page after the key", 1, PROT_WRITE, MAP_SHARED, EINVAL },
		{ "a page never handed out", 4096, PROT_WRITE, MAP_SHARED,
		  EINVAL },
		{ "a private mapping", 0, PROT_WRITE, MAP_PRIVATE, EINVAL },
		/* The driver refuses to make device memory executable. */
		{ "an executable mapping", 0, PROT_READ | PROT_EXEC, MAP_SHARED,
		  EPERM },
	};
	unsigned int i;
	__u64 key;
	void *p;

	OPEN_CONTEXT();
	key = self->ctx.drv.db_mmap_key;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		errno = 0;
		p = mmap(NULL, QHCA_DB_PAGE_SIZE, bad[i].prot, bad[i].flags,
			 self->fd, key + bad[i].offset_pages * QHCA_DB_PAGE_SIZE);
		EXPECT_EQ(MAP_FAILED, p) TH_LOG("mmap of %s worked",
						bad[i].what);
		EXPECT_EQ(bad[i].err, errno) TH_LOG("mmap of %s: %s",
						    bad[i].what,
						    strerror(errno));
		if (p != MAP_FAILED)
			munmap(p, QHCA_DB_PAGE_SIZE);
	}
	expect_objs(_metadata, &self->base, 1, 0);
}

TEST_F(raw, mmap_without_context)
{
	void *p;

	errno = 0;
	p = mmap(NULL, QHCA_DB_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		 self->fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	if (p != MAP_FAILED)
		munmap(p, QHCA_DB_PAGE_SIZE);
}

TEST_F(raw, mapping_outlives_close)
{
	OPEN_CONTEXT();
	self->db = mmap(NULL, QHCA_DB_PAGE_SIZE, PROT_READ | PROT_WRITE,
			MAP_SHARED, self->fd, self->ctx.drv.db_mmap_key);
	ASSERT_NE(MAP_FAILED, self->db);

	/* The mapping holds the file, and with it the doorbell page. */
	ASSERT_EQ(0, close(self->async_fd));
	self->async_fd = -1;
	ASSERT_EQ(0, close(self->fd));
	self->fd = -1;
	expect_objs(_metadata, &self->base, 1, 0);
	EXPECT_EQ(0U, *(volatile __u32 *)self->db);

	ASSERT_EQ(0, munmap(self->db, QHCA_DB_PAGE_SIZE));
	self->db = MAP_FAILED;
	expect_objs(_metadata, &self->base, 0, 0);
}

TEST_F(raw, alloc_pd)
{
	struct alloc_pd_resp resp;
	size_t out = sizeof(resp.core) + sizeof(resp.drv);

	OPEN_CONTEXT();
	ASSERT_LT(0, alloc_pd(self->fd, NULL, 0, &resp, out))
		TH_LOG("ALLOC_PD: %s", strerror(errno));
	EXPECT_EQ(0U, resp.drv.comp_mask);
	EXPECT_GT((__u32)QHCA_DEFAULT_MAX_PDS, resp.drv.pdn);
	EXPECT_TRUE(untouched(&resp, out, sizeof(resp)));
	expect_objs(_metadata, &self->base, 1, 1);

	ASSERT_EQ((ssize_t)(sizeof(struct ib_uverbs_cmd_hdr) +
			    sizeof(struct ib_uverbs_dealloc_pd)),
		  dealloc_pd(self->fd, resp.core.pd_handle));
	expect_objs(_metadata, &self->base, 1, 0);
}

TEST_F(raw, alloc_pd_without_context)
{
	struct alloc_pd_resp resp;

	EXPECT_ERRNO(EINVAL, alloc_pd(self->fd, NULL, 0, &resp,
				      sizeof(resp.core) + sizeof(resp.drv)));
	expect_objs(_metadata, &self->base, 0, 0);
}

TEST_F(raw, alloc_pd_core_response_short)
{
	struct alloc_pd_resp resp;

	OPEN_CONTEXT();
	EXPECT_ERRNO(ENOSPC, alloc_pd(self->fd, NULL, 0, &resp, 0));
	EXPECT_TRUE(untouched(&resp, 0, sizeof(resp)));
	expect_objs(_metadata, &self->base, 1, 0);
}

TEST_F(raw, alloc_pd_driver_response_short)
{
	struct alloc_pd_resp resp;
	size_t out = sizeof(resp.core) + 4;

	/* Room for comp_mask only: the PD is made, pdn is not written. */
	OPEN_CONTEXT();
	ASSERT_LT(0, alloc_pd(self->fd, NULL, 0, &resp, out))
		TH_LOG("ALLOC_PD with 4 bytes of driver response: %s",
		       strerror(errno));
	EXPECT_EQ(0U, resp.drv.comp_mask);
	EXPECT_TRUE(untouched(&resp, out, sizeof(resp)));
	expect_objs(_metadata, &self->base, 1, 1);
	ASSERT_LT(0, dealloc_pd(self->fd, resp.core.pd_handle));
}

TEST_F(raw, alloc_pd_request_garbage)
{
	static const __u64 garbage = 1;
	static const __u64 zero;
	struct alloc_pd_resp resp;
	size_t out = sizeof(resp.core) + sizeof(resp.drv);

	/* ALLOC_PD has no driver request: any byte of it is excess. */
	OPEN_CONTEXT();
	EXPECT_ERRNO(EINVAL, alloc_pd(self->fd, &garbage, sizeof(garbage),
				      &resp, out));
	expect_objs(_metadata, &self->base, 1, 0);

	ASSERT_LT(0, alloc_pd(self->fd, &zero, sizeof(zero), &resp, out))
		TH_LOG("ALLOC_PD with zero excess: %s", strerror(errno));
	ASSERT_LT(0, dealloc_pd(self->fd, resp.core.pd_handle));
}

TEST_F(raw, dealloc_pd_twice)
{
	struct alloc_pd_resp resp;

	OPEN_CONTEXT();
	ASSERT_LT(0, alloc_pd(self->fd, NULL, 0, &resp,
			      sizeof(resp.core) + sizeof(resp.drv)));
	ASSERT_LT(0, dealloc_pd(self->fd, resp.core.pd_handle));
	expect_objs(_metadata, &self->base, 1, 0);

	/* The handle is gone: uverbs does not find it any more. */
	EXPECT_ERRNO(ENOENT, dealloc_pd(self->fd, resp.core.pd_handle));
	EXPECT_ERRNO(ENOENT, dealloc_pd(self->fd, BAD_HANDLE));
	expect_objs(_metadata, &self->base, 1, 0);
}

TEST_F(raw, close_releases_everything)
{
	struct alloc_pd_resp resp;
	int i;

	OPEN_CONTEXT();
	for (i = 0; i < 8; i++)
		ASSERT_LT(0, alloc_pd(self->fd, NULL, 0, &resp,
				      sizeof(resp.core) + sizeof(resp.drv)));
	expect_objs(_metadata, &self->base, 1, 8);
	/* The teardown closes the file and checks the counters. */
}

/* ---- CQs and QPs ---------------------------------------------------- */

struct create_cq_resp {
	struct ib_uverbs_create_cq_resp core;
	struct qhca_ibv_create_cq_resp drv;
	__u8 tail[64];
};

static ssize_t create_cq(int fd, __u32 cqe, __u32 comp_vector,
			 const void *req, size_t req_len,
			 struct create_cq_resp *resp, size_t out_len)
{
	struct ib_uverbs_create_cq cmd = {
		.response = (uintptr_t)resp,
		.cqe = cqe,
		.comp_vector = comp_vector,
		.comp_channel = -1,
	};

	memset(resp, CANARY, sizeof(*resp));
	return uverbs_cmd(fd, IB_USER_VERBS_CMD_CREATE_CQ, &cmd, sizeof(cmd),
			  req, req_len, out_len);
}

#define CQ_OUT	(sizeof(struct ib_uverbs_create_cq_resp) + \
		 sizeof(struct qhca_ibv_create_cq_resp))

static ssize_t destroy_cq(int fd, __u32 handle)
{
	struct ib_uverbs_destroy_cq_resp resp;
	struct ib_uverbs_destroy_cq cmd = {
		.response = (uintptr_t)&resp,
		.cq_handle = handle,
	};

	return uverbs_cmd(fd, IB_USER_VERBS_CMD_DESTROY_CQ, &cmd, sizeof(cmd),
			  NULL, 0, sizeof(resp));
}

static ssize_t create_qp(int fd, __u32 pd, __u32 scq, __u32 rcq,
			 __u32 max_wr, const void *req, size_t req_len,
			 void *resp, size_t out_len)
{
	struct ib_uverbs_create_qp cmd = {
		.response = (uintptr_t)resp,
		.pd_handle = pd,
		.send_cq_handle = scq,
		.recv_cq_handle = rcq,
		.max_send_wr = max_wr,
		.max_recv_wr = max_wr,
		.max_send_sge = 1,
		.max_recv_sge = 1,
		.qp_type = IB_UVERBS_QPT_RC,
	};

	memset(resp, CANARY, 128);
	return uverbs_cmd(fd, IB_USER_VERBS_CMD_CREATE_QP, &cmd, sizeof(cmd),
			  req, req_len, out_len);
}

#define QP_OUT	(sizeof(struct ib_uverbs_create_qp_resp) + \
		 sizeof(struct qhca_ibv_create_qp_resp))

static ssize_t destroy_qp(int fd, __u32 handle)
{
	struct ib_uverbs_destroy_qp_resp resp;
	struct ib_uverbs_destroy_qp cmd = {
		.response = (uintptr_t)&resp,
		.qp_handle = handle,
	};

	return uverbs_cmd(fd, IB_USER_VERBS_CMD_DESTROY_QP, &cmd, sizeof(cmd),
			  NULL, 0, sizeof(resp));
}

static ssize_t dereg_mr(int fd, __u32 handle)
{
	struct ib_uverbs_dereg_mr cmd = {
		.mr_handle = handle,
	};

	return uverbs_cmd(fd, IB_USER_VERBS_CMD_DEREG_MR, &cmd, sizeof(cmd),
			  NULL, 0, 0);
}

/*
 * With the context open: this many more PDs, CQs and QPs than at the
 * start, and no other object.
 */
static void expect_dp(struct __test_metadata *_metadata,
		      const struct qhca_objs *base, long pds, long cqs,
		      long qps)
{
	QHCA_EXPECT_OBJS(*base, "uars+1 pds%+ld cqs%+ld qps%+ld", pds, cqs,
			 qps);
}

#define EXPECT_DP_UNCHANGED() expect_dp(_metadata, &self->base, 0, 0, 0)
#define EXPECT_DP_UNCHANGED_BUT(pds, cqs) \
	expect_dp(_metadata, &self->base, pds, cqs, 0)

/* Sizes out of range: the driver's own limits and the core's. */
TEST_F(raw, create_cq_bad_sizes)
{
	static const struct {
		const char *what;
		__u32 cqe;
		__u32 vector;
	} bad[] = {
		{ "no entries", 0, 0 },
		{ "one more than max_cqe", QHCA_DEFAULT_MAX_CQE + 1, 0 },
		{ "2^31 entries", 0x80000000u, 0 },
		{ "all ones", 0xffffffffu, 0 },
		{ "a completion vector that does not exist", 16, 1000 },
	};
	struct create_cq_resp resp;
	unsigned int i;

	OPEN_CONTEXT();
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		errno = 0;
		EXPECT_EQ(-1, create_cq(self->fd, bad[i].cqe, bad[i].vector,
					NULL, 0, &resp, CQ_OUT))
			TH_LOG("CREATE_CQ with %s worked", bad[i].what);
		EXPECT_EQ(EINVAL, errno) TH_LOG("CREATE_CQ with %s: %s",
						bad[i].what, strerror(errno));
	}
	EXPECT_DP_UNCHANGED();
}

/*
 * No driver request at all reads as a zeroed one; a response with no room
 * for the driver part gets the core part only.
 */
TEST_F(raw, create_cq_no_driver_data)
{
	struct create_cq_resp resp;

	OPEN_CONTEXT();
	ASSERT_LT(0, create_cq(self->fd, 16, 0, NULL, 0, &resp,
			       sizeof(resp.core)))
		TH_LOG("CREATE_CQ: %s", strerror(errno));
	EXPECT_LE(16U, resp.core.cqe);
	EXPECT_TRUE(untouched(&resp, sizeof(resp.core), sizeof(resp)));
	EXPECT_LT(0, destroy_cq(self->fd, resp.core.cq_handle));
	EXPECT_DP_UNCHANGED();
}

/* Wrong handles and a second destroy: ENOENT, and nothing else freed. */
TEST_F(raw, cq_bad_handles_and_double_destroy)
{
	struct create_cq_resp resp;
	__u64 key;
	void *p;

	OPEN_CONTEXT();
	EXPECT_ERRNO(ENOENT, destroy_cq(self->fd, BAD_HANDLE));
	ASSERT_LT(0, create_cq(self->fd, 16, 0, NULL, 0, &resp, CQ_OUT))
		TH_LOG("CREATE_CQ: %s", strerror(errno));
	key = resp.drv.ring_mmap_key;
	EXPECT_ERRNO(ENOENT, destroy_cq(self->fd, resp.core.cq_handle + 1));
	EXPECT_LT(0, destroy_cq(self->fd, resp.core.cq_handle));
	EXPECT_ERRNO(ENOENT, destroy_cq(self->fd, resp.core.cq_handle));
	EXPECT_ERRNO(ENOENT, destroy_qp(self->fd, BAD_HANDLE));
	EXPECT_ERRNO(ENOENT, dereg_mr(self->fd, BAD_HANDLE));

	/* The destroyed CQ's ring is no longer handed out. */
	errno = 0;
	p = mmap(NULL, resp.drv.ring_mmap_size, PROT_READ | PROT_WRITE,
		 MAP_SHARED, self->fd, key);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	if (p != MAP_FAILED)
		munmap(p, resp.drv.ring_mmap_size);
	EXPECT_DP_UNCHANGED();
}

/*
 * A QP on handles that are not there or of the wrong type, out-of-range
 * sizes, an unknown comp_mask bit.
 */
TEST_F(raw, create_qp_bad_handles_and_sizes)
{
	struct qhca_ibv_create_qp_req req = { .comp_mask = 1 };
	struct create_cq_resp cq;
	struct alloc_pd_resp pd;
	__u8 resp[128];
	__u32 pdh, cqh;

	OPEN_CONTEXT();
	ASSERT_LT(0, alloc_pd(self->fd, NULL, 0, &pd,
			      sizeof(pd.core) + sizeof(pd.drv)));
	pdh = pd.core.pd_handle;
	ASSERT_LT(0, create_cq(self->fd, 64, 0, NULL, 0, &cq, CQ_OUT));
	cqh = cq.core.cq_handle;

	/* No such object: ENOENT from ib_core's lookup. */
	EXPECT_ERRNO(ENOENT, create_qp(self->fd, BAD_HANDLE, cqh, cqh, 16,
				       NULL, 0, resp, QP_OUT));
	EXPECT_ERRNO(ENOENT, create_qp(self->fd, pdh, BAD_HANDLE, cqh, 16,
				       NULL, 0, resp, QP_OUT));
	EXPECT_ERRNO(ENOENT, create_qp(self->fd, pdh, cqh, BAD_HANDLE, 16,
				       NULL, 0, resp, QP_OUT));
	/* An object of another type: a CQ's handle where a PD's belongs. */
	EXPECT_ERRNO(EINVAL, create_qp(self->fd, cqh, cqh, cqh, 16,
				       NULL, 0, resp, QP_OUT));
	EXPECT_ERRNO(EINVAL, create_qp(self->fd, pdh, cqh, cqh,
				       QHCA_DEFAULT_MAX_QP_WR + 1,
				       NULL, 0, resp, QP_OUT));
	EXPECT_ERRNO(EINVAL, create_qp(self->fd, pdh, cqh, cqh, 0xffffffffu,
				       NULL, 0, resp, QP_OUT));
	EXPECT_ERRNO(EINVAL, create_qp(self->fd, pdh, cqh, cqh, 16,
				       &req, sizeof(req), resp, QP_OUT));
	EXPECT_DP_UNCHANGED_BUT(1, 1);

	/* With all of that refused, a good QP still comes and goes. */
	ASSERT_LT(0, create_qp(self->fd, pdh, cqh, cqh, 16, NULL, 0, resp,
			       QP_OUT))
		TH_LOG("CREATE_QP: %s", strerror(errno));
	EXPECT_LT(0, destroy_qp(self->fd,
				((struct ib_uverbs_create_qp_resp *)resp)->qp_handle));
	EXPECT_ERRNO(ENOENT, destroy_qp(self->fd,
					((struct ib_uverbs_create_qp_resp *)resp)->qp_handle));
	EXPECT_LT(0, destroy_cq(self->fd, cqh));
	EXPECT_LT(0, dealloc_pd(self->fd, pdh));
	EXPECT_DP_UNCHANGED();
}

/* Driver requests GET_CONTEXT must refuse, and leave no context behind. */
FIXTURE(bad_request)
{
	int fd;
	int async_fd;
	struct qhca_objs base;
};

FIXTURE_VARIANT(bad_request)
{
	__u8 req[24];
	size_t len;
};

FIXTURE_VARIANT_ADD(bad_request, comp_mask_low)
{
	.req = { 0x01 },
	.len = 8,
};

FIXTURE_VARIANT_ADD(bad_request, comp_mask_high)
{
	.req = { [3] = 0x80 },
	.len = 8,
};

FIXTURE_VARIANT_ADD(bad_request, reserved)
{
	.req = { [4] = 0x01 },
	.len = 8,
};

FIXTURE_VARIANT_ADD(bad_request, excess_word)
{
	.req = { [8] = 0x01 },
	.len = 12,
};

FIXTURE_VARIANT_ADD(bad_request, excess_last_byte)
{
	.req = { [23] = 0x01 },
	.len = 24,
};

FIXTURE_SETUP(bad_request)
{
	char path[64];

	self->async_fd = -1;
	ASSERT_EQ(0, qhca_uverbs_path(path, sizeof(path)));
	self->fd = open(path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, qhca_read_objs(&self->base))
		TH_LOG("no object counters in " QHCA_SYSFS_HW_OBJECTS);
}

FIXTURE_TEARDOWN(bad_request)
{
	if (self->async_fd >= 0)
		close(self->async_fd);
	if (self->fd >= 0)
		close(self->fd);
	QHCA_EXPECT_OBJS_AT(self->base);
}

TEST_F(bad_request, get_context)
{
	struct get_context_resp resp;
	size_t out = sizeof(resp.core) + sizeof(resp.drv);

	EXPECT_ERRNO(EINVAL, get_context(self->fd, variant->req, variant->len,
					 &resp, out));
	expect_objs(_metadata, &self->base, 0, 0);

	/* The refused request left the file able to get its context. */
	ASSERT_LT(0, get_context(self->fd, &good_req, sizeof(good_req),
				 &resp, out))
		TH_LOG("GET_CONTEXT after a refused one: %s", strerror(errno));
	self->async_fd = resp.core.async_fd;
	expect_objs(_metadata, &self->base, 1, 0);
}

/* The same bad driver requests on CREATE_CQ and CREATE_QP. */
TEST_F(bad_request, create_cq_and_qp)
{
	struct get_context_resp ctx;
	struct create_cq_resp cq;
	struct alloc_pd_resp pd;
	__u8 resp[128];

	ASSERT_LT(0, get_context(self->fd, &good_req, sizeof(good_req), &ctx,
				 sizeof(ctx.core) + sizeof(ctx.drv)));
	self->async_fd = ctx.core.async_fd;

	EXPECT_ERRNO(EINVAL, create_cq(self->fd, 16, 0, variant->req,
				       variant->len, &cq, CQ_OUT));
	QHCA_EXPECT_OBJS(self->base, "uars+1");

	ASSERT_LT(0, alloc_pd(self->fd, NULL, 0, &pd,
			      sizeof(pd.core) + sizeof(pd.drv)));
	ASSERT_LT(0, create_cq(self->fd, 16, 0, NULL, 0, &cq, CQ_OUT));
	EXPECT_ERRNO(EINVAL, create_qp(self->fd, pd.core.pd_handle,
				       cq.core.cq_handle, cq.core.cq_handle,
				       16, variant->req, variant->len, resp,
				       QP_OUT));
	QHCA_EXPECT_OBJS(self->base, "uars+1 pds+1 cqs+1");
	EXPECT_LT(0, destroy_cq(self->fd, cq.core.cq_handle));
	EXPECT_LT(0, dealloc_pd(self->fd, pd.core.pd_handle));
	QHCA_EXPECT_OBJS(self->base, "uars+1");
}

TEST_HARNESS_MAIN
