// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The RC error semantics of Documentation/hw/qhca-transport.rst, "Errors":
 * for each case the requester's and the responder's completion status,
 * both QPs' states afterwards (ibv_query_qp), the asynchronous event where
 * there is one, WR_FLUSH_ERR for every WQE that was outstanding or posted
 * later, and memory nobody may write left untouched.
 */
#include "rc_pair.h"

#define LEN		256
#define ASYNC_MS	2000

/* What every error fixture holds. */
struct env {
	struct rc_pair p;
	struct rc_buf local;		/* QP 0's memory, full access */
	struct rc_buf remote;		/* QP 1's memory, full access */
	struct rc_buf special;		/* an MR made for the case */
	struct ibv_pd *pd2;		/* another PD of the same context */
};

static void env_setup(struct __test_metadata *_metadata, struct env *e,
		      const struct rc_opts *opts)
{
	rc_pair_open(_metadata, &e->p, opts);
	rc_buf_alloc(_metadata, &e->local, e->p.pd, 4 * 4096, RC_ACCESS_ALL);
	rc_buf_alloc(_metadata, &e->remote, e->p.pd, 4 * 4096, RC_ACCESS_ALL);
	rc_fill(e->local.mem, e->local.size, 50);
	rc_prepare_dst(&e->remote, 4096, LEN, 51);
}

static void env_teardown(struct __test_metadata *_metadata, struct env *e)
{
	rc_buf_free(_metadata, &e->local);
	rc_buf_free(_metadata, &e->remote);
	rc_buf_free(_metadata, &e->special);
	if (e->pd2)
		EXPECT_EQ(0, ibv_dealloc_pd(e->pd2));
	rc_pair_close(_metadata, &e->p);
}

#define EXPECT_QP_STATE(state, qp)					\
	EXPECT_EQ((int)(state), rc_qp_state(qp))

/*
 * A QP in ERR flushes what is posted to it: one more send and one more
 * receive each complete with WR_FLUSH_ERR, whether signaled or not.
 */
static void expect_flushes_new_work(struct __test_metadata *_metadata,
				    struct env *e, int i)
{
	struct rc_side *s = &e->p.s[i];
	struct ibv_sge sge = rc_sge(&e->local, 0, 8);

	ASSERT_EQ(0, rc_post(s->qp, 0xf1, IBV_WR_SEND, 0, &sge, 1, 0, 0));
	RC_WAIT_WC(s->scq, 0xf1, IBV_WC_WR_FLUSH_ERR, -1);
	ASSERT_EQ(0, rc_post_recv(s->qp, 0xf2, &sge, 1));
	RC_WAIT_WC(s->rcq, 0xf2, IBV_WC_WR_FLUSH_ERR, -1);
	rc_expect_no_wc(_metadata, s->scq);
	rc_expect_no_wc(_metadata, s->rcq);
}

/* ---- Local protection: the requester's own SGE -------------------- */

enum lkey_case {
	LKEY_BAD_KEY,		/* right index, wrong 8-bit key */
	LKEY_BAD_INDEX,		/* no such MR */
	LKEY_PAST_END,		/* one byte beyond the MR */
	LKEY_OTHER_PD,		/* an MR of another PD */
	LKEY_DEREGISTERED,	/* an MR that was deregistered */
	LKEY_READ_NO_LOCAL_WRITE, /* READ into an MR it may not write */
	LKEY_ATOMIC_NO_LOCAL_WRITE,
};

FIXTURE(lkey)
{
	struct env e;
};

FIXTURE_VARIANT(lkey)
{
	enum lkey_case kind;
	enum ibv_wr_opcode opcode;
	bool signaled;
};

FIXTURE_VARIANT_ADD(lkey, send_bad_key)
{
	.kind = LKEY_BAD_KEY,
	.opcode = IBV_WR_SEND,
	.signaled = true,
};

FIXTURE_VARIANT_ADD(lkey, send_bad_key_unsignaled)
{
	.kind = LKEY_BAD_KEY,
	.opcode = IBV_WR_SEND,
};

FIXTURE_VARIANT_ADD(lkey, write_bad_index)
{
	.kind = LKEY_BAD_INDEX,
	.opcode = IBV_WR_RDMA_WRITE,
	.signaled = true,
};

FIXTURE_VARIANT_ADD(lkey, send_past_end)
{
	.kind = LKEY_PAST_END,
	.opcode = IBV_WR_SEND,
	.signaled = true,
};

FIXTURE_VARIANT_ADD(lkey, write_other_pd)
{
	.kind = LKEY_OTHER_PD,
	.opcode = IBV_WR_RDMA_WRITE,
	.signaled = true,
};

FIXTURE_VARIANT_ADD(lkey, send_deregistered)
{
	.kind = LKEY_DEREGISTERED,
	.opcode = IBV_WR_SEND,
	.signaled = true,
};

FIXTURE_VARIANT_ADD(lkey, read_no_local_write)
{
	.kind = LKEY_READ_NO_LOCAL_WRITE,
	.opcode = IBV_WR_RDMA_READ,
	.signaled = true,
};

FIXTURE_VARIANT_ADD(lkey, atomic_no_local_write)
{
	.kind = LKEY_ATOMIC_NO_LOCAL_WRITE,
	.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
	.signaled = true,
};

FIXTURE_SETUP(lkey)
{
	struct rc_opts opts;

	rc_default_opts(&opts);
	env_setup(_metadata, &self->e, &opts);
	rc_pair_connect(_metadata, &self->e.p);
}

FIXTURE_TEARDOWN(lkey)
{
	env_teardown(_metadata, &self->e);
}

TEST_F(lkey, loc_prot_err)
{
	struct env *e = &self->e;
	struct rc_pair *p = &e->p;
	uint32_t len = variant->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD ?
		       8 : LEN;
	struct ibv_sge sge = rc_sge(&e->local, 0, len), rsge;
	struct ibv_send_wr wr = {
		.wr_id = 1,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = variant->opcode,
		.send_flags = variant->signaled ? IBV_SEND_SIGNALED : 0,
	}, *bad;
	struct ibv_mr *gone;

	switch (variant->kind) {
	case LKEY_BAD_KEY:
		sge.lkey ^= 0x5a;
		break;
	case LKEY_BAD_INDEX:
		sge.lkey = 0x00fffe00;
		break;
	case LKEY_PAST_END:
		sge = rc_sge(&e->local, e->local.size - LEN + 1, LEN);
		break;
	case LKEY_OTHER_PD:
		e->pd2 = ibv_alloc_pd(p->ctx);
		ASSERT_NE(NULL, e->pd2);
		rc_buf_alloc(_metadata, &e->special, e->pd2, 4096,
			     RC_ACCESS_ALL);
		sge = rc_sge(&e->special, 0, len);
		break;
	case LKEY_DEREGISTERED:
		rc_buf_alloc(_metadata, &e->special, p->pd, 4096,
			     RC_ACCESS_ALL);
		sge = rc_sge(&e->special, 0, len);
		gone = e->special.mr;
		e->special.mr = NULL;
		ASSERT_EQ(0, ibv_dereg_mr(gone));
		break;
	case LKEY_READ_NO_LOCAL_WRITE:
	case LKEY_ATOMIC_NO_LOCAL_WRITE:
		/* Fine to send from, not to receive into. */
		rc_buf_alloc(_metadata, &e->special, p->pd, 4096, 0);
		sge = rc_sge(&e->special, 0, len);
		break;
	}
	wr.wr.rdma.remote_addr = (uintptr_t)e->remote.mem + 4096;
	wr.wr.rdma.rkey = e->remote.mr->rkey;
	if (variant->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = (uintptr_t)e->remote.mem + 4096;
		wr.wr.atomic.rkey = e->remote.mr->rkey;
		wr.wr.atomic.compare_add = 1;
	}

	rsge = rc_sge(&e->remote, 4096, LEN);
	ASSERT_EQ(0, rc_post_recv(p->s[1].qp, 100, &rsge, 1));
	ASSERT_EQ(0, ibv_post_send(p->s[0].qp, &wr, &bad));
	/*
	 * A good WQE behind the bad one, which is flushed: it would write
	 * into QP 0's own memory, so that the remote memory checked below
	 * shows what the bad WQE did, and only that.
	 */
	sge = rc_sge(&e->local, 0, LEN);
	ASSERT_EQ(0, rc_post(p->s[0].qp, 2, IBV_WR_RDMA_WRITE,
			     IBV_SEND_SIGNALED, &sge, 1,
			     (uintptr_t)e->local.mem + 2 * 4096,
			     e->local.mr->rkey));

	RC_WAIT_WC(p->s[0].scq, 1, IBV_WC_LOC_PROT_ERR, -1);
	RC_WAIT_WC(p->s[0].scq, 2, IBV_WC_WR_FLUSH_ERR, -1);
	EXPECT_QP_STATE(IBV_QPS_ERR, p->s[0].qp);
	expect_flushes_new_work(_metadata, e, 0);

	/*
	 * The responder saw no error.  An atomic whose result cannot be
	 * stored may still have been executed there, as on real HCAs that
	 * check the local SGE only when the response arrives; nothing else
	 * may have reached the responder's memory.
	 */
	EXPECT_QP_STATE(IBV_QPS_RTS, p->s[1].qp);
	rc_expect_no_wc(_metadata, p->s[1].rcq);
	if (variant->kind != LKEY_ATOMIC_NO_LOCAL_WRITE)
		RC_EXPECT_UNTOUCHED(&e->remote, 4096, LEN, 51);
}

/* ---- Remote access: the responder's rkey and QP rights ------------ */

enum rkey_case {
	RKEY_BAD_KEY,
	RKEY_PAST_END,
	RKEY_OTHER_PD,
	RKEY_DEREGISTERED,
	RKEY_MR_RIGHTS,		/* the MR lacks the right */
	RKEY_QP_RIGHTS,		/* the responder QP lacks the right */
};

FIXTURE(rkey)
{
	struct env e;
};

FIXTURE_VARIANT(rkey)
{
	enum rkey_case kind;
	enum ibv_wr_opcode opcode;
	int deny;		/* the access flag the case takes away */
};

FIXTURE_VARIANT_ADD(rkey, write_bad_key)
{
	.kind = RKEY_BAD_KEY,
	.opcode = IBV_WR_RDMA_WRITE,
};

FIXTURE_VARIANT_ADD(rkey, write_with_imm_bad_key)
{
	.kind = RKEY_BAD_KEY,
	.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
};

FIXTURE_VARIANT_ADD(rkey, read_bad_key)
{
	.kind = RKEY_BAD_KEY,
	.opcode = IBV_WR_RDMA_READ,
};

FIXTURE_VARIANT_ADD(rkey, write_past_end)
{
	.kind = RKEY_PAST_END,
	.opcode = IBV_WR_RDMA_WRITE,
};

FIXTURE_VARIANT_ADD(rkey, read_past_end)
{
	.kind = RKEY_PAST_END,
	.opcode = IBV_WR_RDMA_READ,
};

FIXTURE_VARIANT_ADD(rkey, write_other_pd)
{
	.kind = RKEY_OTHER_PD,
	.opcode = IBV_WR_RDMA_WRITE,
};

FIXTURE_VARIANT_ADD(rkey, write_deregistered)
{
	.kind = RKEY_DEREGISTERED,
	.opcode = IBV_WR_RDMA_WRITE,
};

FIXTURE_VARIANT_ADD(rkey, write_mr_without_remote_write)
{
	.kind = RKEY_MR_RIGHTS,
	.opcode = IBV_WR_RDMA_WRITE,
	.deny = IBV_ACCESS_REMOTE_WRITE,
};

FIXTURE_VARIANT_ADD(rkey, read_mr_without_remote_read)
{
	.kind = RKEY_MR_RIGHTS,
	.opcode = IBV_WR_RDMA_READ,
	.deny = IBV_ACCESS_REMOTE_READ,
};

FIXTURE_VARIANT_ADD(rkey, atomic_mr_without_remote_atomic)
{
	.kind = RKEY_MR_RIGHTS,
	.opcode = IBV_WR_ATOMIC_CMP_AND_SWP,
	.deny = IBV_ACCESS_REMOTE_ATOMIC,
};

FIXTURE_VARIANT_ADD(rkey, write_qp_without_remote_write)
{
	.kind = RKEY_QP_RIGHTS,
	.opcode = IBV_WR_RDMA_WRITE,
	.deny = IBV_ACCESS_REMOTE_WRITE,
};

FIXTURE_VARIANT_ADD(rkey, read_qp_without_remote_read)
{
	.kind = RKEY_QP_RIGHTS,
	.opcode = IBV_WR_RDMA_READ,
	.deny = IBV_ACCESS_REMOTE_READ,
};

FIXTURE_VARIANT_ADD(rkey, atomic_qp_without_remote_atomic)
{
	.kind = RKEY_QP_RIGHTS,
	.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
	.deny = IBV_ACCESS_REMOTE_ATOMIC,
};

FIXTURE_SETUP(rkey)
{
	struct rc_opts opts;

	rc_default_opts(&opts);
	if (variant->kind == RKEY_QP_RIGHTS)
		opts.access[1] &= ~variant->deny;
	env_setup(_metadata, &self->e, &opts);
	rc_pair_connect(_metadata, &self->e.p);
}

FIXTURE_TEARDOWN(rkey)
{
	env_teardown(_metadata, &self->e);
}

TEST_F(rkey, rem_access_err)
{
	const bool atomic = variant->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
			    variant->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
	struct env *e = &self->e;
	struct rc_pair *p = &e->p;
	struct rc_buf *target = &e->remote;
	uint32_t len = atomic ? 8 : LEN;
	struct ibv_sge sge = rc_sge(&e->local, 0, len), rsge;
	uint64_t raddr = (uintptr_t)e->remote.mem + 4096;
	uint32_t rkey = e->remote.mr->rkey;
	struct ibv_send_wr wr = {
		.wr_id = 1,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = variant->opcode,
		.send_flags = IBV_SEND_SIGNALED,
		.imm_data = htobe32(0x1234),
	}, *bad;
	struct ibv_mr *gone;
	size_t off = 4096;

	switch (variant->kind) {
	case RKEY_BAD_KEY:
		rkey ^= 0x5a;
		break;
	case RKEY_PAST_END:
		/* Starts inside the MR, ends one byte after it. */
		raddr = (uintptr_t)e->remote.mem + e->remote.size - len + 1;
		break;
	case RKEY_OTHER_PD:
		e->pd2 = ibv_alloc_pd(p->ctx);
		ASSERT_NE(NULL, e->pd2);
		rc_buf_alloc(_metadata, &e->special, e->pd2, 8192,
			     RC_ACCESS_ALL);
		break;
	case RKEY_DEREGISTERED:
		rc_buf_alloc(_metadata, &e->special, p->pd, 8192,
			     RC_ACCESS_ALL);
		break;
	case RKEY_MR_RIGHTS:
		rc_buf_alloc(_metadata, &e->special, p->pd, 8192,
			     RC_ACCESS_ALL & ~variant->deny);
		break;
	case RKEY_QP_RIGHTS:
		break;
	}
	if (e->special.mr) {
		target = &e->special;
		raddr = (uintptr_t)target->mem + off;
		rkey = target->mr->rkey;
	}
	rc_prepare_dst(target, off, len, 51);
	if (variant->kind == RKEY_DEREGISTERED) {
		gone = e->special.mr;
		e->special.mr = NULL;
		ASSERT_EQ(0, ibv_dereg_mr(gone));
	}
	if (atomic) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 0;
		wr.wr.atomic.swap = 0;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	if (variant->opcode == IBV_WR_RDMA_READ) {
		/* What a READ would bring back must not arrive either. */
		rc_fill(target->mem + off, len, 52);
		rc_prepare_dst(&e->local, 0, len, 53);
	}

	/* A receive on each side: the responder's goes with its QP. */
	rsge = rc_sge(&e->remote, 0, LEN);
	ASSERT_EQ(0, rc_post_recv(p->s[1].qp, 100, &rsge, 1));
	ASSERT_EQ(0, ibv_post_send(p->s[0].qp, &wr, &bad));
	ASSERT_EQ(0, rc_post(p->s[0].qp, 2, IBV_WR_SEND, IBV_SEND_SIGNALED,
			     &sge, 1, 0, 0));

	RC_WAIT_WC(p->s[0].scq, 1, IBV_WC_REM_ACCESS_ERR, -1);
	RC_WAIT_WC(p->s[0].scq, 2, IBV_WC_WR_FLUSH_ERR, -1);
	EXPECT_QP_STATE(IBV_QPS_ERR, p->s[0].qp);

	/* The responder's QP went to ERR and told its owner why. */
	RC_WAIT_WC(p->s[1].rcq, 100, IBV_WC_WR_FLUSH_ERR, -1);
	EXPECT_QP_STATE(IBV_QPS_ERR, p->s[1].qp);
	EXPECT_TRUE(rc_wait_async(p->ctx, IBV_EVENT_QP_ACCESS_ERR,
				  p->s[1].qp, ASYNC_MS))
		TH_LOG("no IBV_EVENT_QP_ACCESS_ERR for the responder");

	if (variant->opcode == IBV_WR_RDMA_READ)
		RC_EXPECT_UNTOUCHED(&e->local, 0, len, 53);
	else
		RC_EXPECT_UNTOUCHED(target, off, len, 51);
	expect_flushes_new_work(_metadata, e, 0);
	expect_flushes_new_work(_metadata, e, 1);
}

/* ---- Responder errors that need a receive ------------------------- */

enum resp_case {
	RESP_RECV_TOO_SMALL,
	RESP_RECV_BAD_LKEY,
	RESP_RECV_NO_LOCAL_WRITE,
	RESP_ATOMIC_MISALIGNED,
};

FIXTURE(resp)
{
	struct env e;
};

FIXTURE_VARIANT(resp)
{
	enum resp_case kind;
	enum ibv_mtu mtu;
	uint32_t send_len;
	int recv_sges;
	uint32_t recv_len;	/* all SGEs together */
	enum ibv_wc_status req_status;
	enum ibv_wc_status resp_status;	/* of the first receive */
	enum ibv_event_type event;	/* 0: none is checked */
};

FIXTURE_VARIANT_ADD(resp, recv_too_small)
{
	.kind = RESP_RECV_TOO_SMALL,
	.mtu = IBV_MTU_4096,
	.send_len = 64,
	.recv_sges = 1,
	.recv_len = 16,
	.req_status = IBV_WC_REM_INV_REQ_ERR,
	.resp_status = IBV_WC_LOC_LEN_ERR,
};

FIXTURE_VARIANT_ADD(resp, recv_one_byte_short_multi_packet)
{
	.kind = RESP_RECV_TOO_SMALL,
	.mtu = IBV_MTU_256,
	.send_len = 1001,
	.recv_sges = 1,
	.recv_len = 1000,
	.req_status = IBV_WC_REM_INV_REQ_ERR,
	.resp_status = IBV_WC_LOC_LEN_ERR,
};

FIXTURE_VARIANT_ADD(resp, recv_sges_too_small)
{
	.kind = RESP_RECV_TOO_SMALL,
	.mtu = IBV_MTU_4096,
	.send_len = 31,
	.recv_sges = 3,
	.recv_len = 30,
	.req_status = IBV_WC_REM_INV_REQ_ERR,
	.resp_status = IBV_WC_LOC_LEN_ERR,
};

FIXTURE_VARIANT_ADD(resp, recv_bad_lkey)
{
	.kind = RESP_RECV_BAD_LKEY,
	.mtu = IBV_MTU_4096,
	.send_len = 64,
	.recv_sges = 1,
	.recv_len = 64,
	.req_status = IBV_WC_REM_OP_ERR,
	.resp_status = IBV_WC_LOC_PROT_ERR,
};

FIXTURE_VARIANT_ADD(resp, recv_without_local_write)
{
	.kind = RESP_RECV_NO_LOCAL_WRITE,
	.mtu = IBV_MTU_4096,
	.send_len = 64,
	.recv_sges = 1,
	.recv_len = 64,
	.req_status = IBV_WC_REM_OP_ERR,
	.resp_status = IBV_WC_LOC_PROT_ERR,
};

FIXTURE_VARIANT_ADD(resp, atomic_misaligned)
{
	.kind = RESP_ATOMIC_MISALIGNED,
	.mtu = IBV_MTU_4096,
	.recv_sges = 1,
	.recv_len = 64,
	.req_status = IBV_WC_REM_INV_REQ_ERR,
	.resp_status = IBV_WC_WR_FLUSH_ERR,
	.event = IBV_EVENT_QP_REQ_ERR,
};

FIXTURE_SETUP(resp)
{
	struct rc_opts opts;

	rc_default_opts(&opts);
	opts.path_mtu = variant->mtu;
	opts.max_recv_sge = 4;
	env_setup(_metadata, &self->e, &opts);
	rc_pair_connect(_metadata, &self->e.p);
}

FIXTURE_TEARDOWN(resp)
{
	env_teardown(_metadata, &self->e);
}

TEST_F(resp, status)
{
	struct env *e = &self->e;
	struct rc_pair *p = &e->p;
	struct ibv_sge sge, rsge[4];
	uint32_t piece = variant->recv_len / variant->recv_sges;
	size_t off = 4096;
	int i, ret;

	/* The receive's SGEs, back to back but for the last, at off. */
	for (i = 0; i < variant->recv_sges; i++) {
		rsge[i] = rc_sge(&e->remote, off + i * piece,
				 i == variant->recv_sges - 1 ?
				 variant->recv_len - i * piece : piece);
	}
	rc_prepare_dst(&e->remote, off, variant->recv_len, 54);
	switch (variant->kind) {
	case RESP_RECV_BAD_LKEY:
		rsge[0].lkey ^= 0x5a;
		break;
	case RESP_RECV_NO_LOCAL_WRITE:
		rc_buf_alloc(_metadata, &e->special, p->pd, 8192, 0);
		rsge[0] = rc_sge(&e->special, 0, variant->recv_len);
		break;
	default:
		break;
	}
	ASSERT_EQ(0, rc_post_recv(p->s[1].qp, 100, rsge, variant->recv_sges));
	/* A second receive, which the error flushes. */
	sge = rc_sge(&e->remote, 3 * 4096, 64);
	ASSERT_EQ(0, rc_post_recv(p->s[1].qp, 101, &sge, 1));

	if (variant->kind == RESP_ATOMIC_MISALIGNED) {
		sge = rc_sge(&e->local, 0, 8);
		ret = rc_post_atomic(p->s[0].qp, 1,
				     IBV_WR_ATOMIC_FETCH_AND_ADD,
				     IBV_SEND_SIGNALED, &sge,
				     (uintptr_t)e->remote.mem + off + 4,
				     e->remote.mr->rkey, 1, 0);
		/* A provider may refuse it before the device sees it. */
		if (ret == EINVAL) {
			TH_LOG("refused at post time");
			rc_expect_no_wc(_metadata, p->s[0].scq);
			rc_expect_no_wc(_metadata, p->s[1].rcq);
			EXPECT_QP_STATE(IBV_QPS_RTS, p->s[0].qp);
			EXPECT_QP_STATE(IBV_QPS_RTS, p->s[1].qp);
			RC_EXPECT_UNTOUCHED(&e->remote, off,
					    variant->recv_len, 54);
			return;
		}
		ASSERT_EQ(0, ret);
	} else {
		sge = rc_sge(&e->local, 0, variant->send_len);
		ASSERT_EQ(0, rc_post(p->s[0].qp, 1, IBV_WR_SEND,
				     IBV_SEND_SIGNALED, &sge, 1, 0, 0));
	}
	sge = rc_sge(&e->local, 0, 8);
	ASSERT_EQ(0, rc_post(p->s[0].qp, 2, IBV_WR_SEND, IBV_SEND_SIGNALED,
			     &sge, 1, 0, 0));

	RC_WAIT_WC(p->s[0].scq, 1, variant->req_status, -1);
	RC_WAIT_WC(p->s[0].scq, 2, IBV_WC_WR_FLUSH_ERR, -1);
	RC_WAIT_WC(p->s[1].rcq, 100, variant->resp_status, -1);
	RC_WAIT_WC(p->s[1].rcq, 101, IBV_WC_WR_FLUSH_ERR, -1);
	EXPECT_QP_STATE(IBV_QPS_ERR, p->s[0].qp);
	EXPECT_QP_STATE(IBV_QPS_ERR, p->s[1].qp);
	if (variant->event)
		EXPECT_TRUE(rc_wait_async(p->ctx, variant->event,
					  p->s[1].qp, ASYNC_MS))
			TH_LOG("no %s for the responder",
			       ibv_event_type_str(variant->event));

	/* Whatever arrived stayed within the receive's SGEs. */
	RC_EXPECT_POISON(e->remote.mem, off, 55);
	RC_EXPECT_POISON(e->remote.mem + off + variant->recv_len,
			 e->remote.size - off - variant->recv_len, 56);
	if (variant->kind == RESP_ATOMIC_MISALIGNED)
		RC_EXPECT_UNTOUCHED(&e->remote, off, variant->recv_len, 54);

	expect_flushes_new_work(_metadata, e, 0);
	expect_flushes_new_work(_metadata, e, 1);
}

/* ---- RNR: no receive posted ----------------------------------------- */

FIXTURE(rnr)
{
	struct env e;
};

FIXTURE_VARIANT(rnr)
{
	uint8_t rnr_retry;
	bool late_recv;		/* post the receive while retrying */
};

FIXTURE_VARIANT_ADD(rnr, no_retry)
{
	.rnr_retry = 0,
};

FIXTURE_VARIANT_ADD(rnr, one_retry)
{
	.rnr_retry = 1,
};

FIXTURE_VARIANT_ADD(rnr, three_retries)
{
	.rnr_retry = 3,
};

FIXTURE_VARIANT_ADD(rnr, forever_then_receive)
{
	.rnr_retry = 7,
	.late_recv = true,
};

FIXTURE_SETUP(rnr)
{
	struct rc_opts opts;

	rc_default_opts(&opts);
	opts.rnr_retry = variant->rnr_retry;
	/* The shortest RNR timer there is, 10 us. */
	opts.min_rnr_timer = 1;
	env_setup(_metadata, &self->e, &opts);
	rc_pair_connect(_metadata, &self->e.p);
}

FIXTURE_TEARDOWN(rnr)
{
	env_teardown(_metadata, &self->e);
}

TEST_F(rnr, rnr_retry_exc_err)
{
	struct env *e = &self->e;
	struct rc_pair *p = &e->p;
	struct ibv_sge sge = rc_sge(&e->local, 0, LEN), rsge;
	struct ibv_wc wc;

	ASSERT_EQ(0, rc_post(p->s[0].qp, 1, IBV_WR_SEND, IBV_SEND_SIGNALED,
			     &sge, 1, 0, 0));
	ASSERT_EQ(0, rc_post(p->s[0].qp, 2, IBV_WR_SEND, IBV_SEND_SIGNALED,
			     &sge, 1, 0, 0));

	if (variant->late_recv) {
		/* Retrying forever: it is still waiting after a while. */
		EXPECT_EQ(0, rc_poll(p->s[0].scq, &wc, 1, RC_QUIET_MS));
		EXPECT_QP_STATE(IBV_QPS_RTS, p->s[0].qp);
		rc_prepare_dst(&e->remote, 4096, LEN, 57);
		rsge = rc_sge(&e->remote, 4096, LEN);
		ASSERT_EQ(0, rc_post_recv(p->s[1].qp, 100, &rsge, 1));
		ASSERT_EQ(0, rc_post_recv(p->s[1].qp, 101, &rsge, 1));
		RC_WAIT_WC(p->s[0].scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND);
		RC_WAIT_WC(p->s[0].scq, 2, IBV_WC_SUCCESS, IBV_WC_SEND);
		RC_WAIT_WC(p->s[1].rcq, 100, IBV_WC_SUCCESS, IBV_WC_RECV);
		RC_WAIT_WC(p->s[1].rcq, 101, IBV_WC_SUCCESS, IBV_WC_RECV);
		RC_EXPECT_PATTERN(e->remote.mem + 4096, LEN, 50);
		EXPECT_QP_STATE(IBV_QPS_RTS, p->s[0].qp);
		EXPECT_QP_STATE(IBV_QPS_RTS, p->s[1].qp);
		return;
	}

	RC_WAIT_WC(p->s[0].scq, 1, IBV_WC_RNR_RETRY_EXC_ERR, -1);
	RC_WAIT_WC(p->s[0].scq, 2, IBV_WC_WR_FLUSH_ERR, -1);
	EXPECT_QP_STATE(IBV_QPS_ERR, p->s[0].qp);
	/* Receiver not ready is no error of the responder's. */
	EXPECT_QP_STATE(IBV_QPS_RTS, p->s[1].qp);
	rc_expect_no_wc(_metadata, p->s[1].rcq);
	expect_flushes_new_work(_metadata, e, 0);
}

/* ---- Transport retries: nobody answers ------------------------------ */

enum retry_case {
	RETRY_DEST_DESTROYED,
	RETRY_DEST_ERR,
	RETRY_DEST_RESET,
	RETRY_DEST_INIT,
	RETRY_WRONG_DLID,
	RETRY_WRONG_QPN,
};

FIXTURE(retry)
{
	struct env e;
};

FIXTURE_VARIANT(retry)
{
	enum retry_case kind;
	uint8_t timeout;
	uint8_t retry_cnt;
	enum ibv_wr_opcode opcode;
};

FIXTURE_VARIANT_ADD(retry, dest_destroyed)
{
	.kind = RETRY_DEST_DESTROYED,
	.timeout = 4,
	.retry_cnt = 1,
	.opcode = IBV_WR_SEND,
};

FIXTURE_VARIANT_ADD(retry, dest_in_err)
{
	.kind = RETRY_DEST_ERR,
	.timeout = 4,
	.retry_cnt = 2,
	.opcode = IBV_WR_RDMA_WRITE,
};

FIXTURE_VARIANT_ADD(retry, dest_in_reset)
{
	.kind = RETRY_DEST_RESET,
	.timeout = 1,
	.retry_cnt = 0,
	.opcode = IBV_WR_RDMA_READ,
};

FIXTURE_VARIANT_ADD(retry, dest_in_init)
{
	.kind = RETRY_DEST_INIT,
	.timeout = 8,
	.retry_cnt = 1,
	.opcode = IBV_WR_SEND,
};

FIXTURE_VARIANT_ADD(retry, wrong_dlid)
{
	.kind = RETRY_WRONG_DLID,
	.timeout = 4,
	.retry_cnt = 3,
	.opcode = IBV_WR_SEND,
};

FIXTURE_VARIANT_ADD(retry, no_such_qpn)
{
	.kind = RETRY_WRONG_QPN,
	.timeout = 4,
	.retry_cnt = 1,
	.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
};

FIXTURE_SETUP(retry)
{
	struct rc_opts opts;
	struct rc_pair *p = &self->e.p;
	uint32_t dest_qpn;
	uint16_t dlid;

	rc_default_opts(&opts);
	opts.timeout = variant->timeout;
	opts.retry_cnt = variant->retry_cnt;
	env_setup(_metadata, &self->e, &opts);

	dest_qpn = p->s[1].qp->qp_num;
	dlid = p->pattr.lid;
	if (variant->kind == RETRY_WRONG_DLID)
		dlid = p->pattr.lid + 1;
	if (variant->kind == RETRY_WRONG_QPN)
		dest_qpn = 0xfffff0;
	rc_connect_one(_metadata, p, 0, dest_qpn, dlid);
	rc_connect_one(_metadata, p, 1, p->s[0].qp->qp_num, p->pattr.lid);

	switch (variant->kind) {
	case RETRY_DEST_DESTROYED:
		ASSERT_EQ(0, ibv_destroy_qp(p->s[1].qp));
		p->s[1].qp = NULL;
		break;
	case RETRY_DEST_ERR:
		ASSERT_EQ(0, rc_to_state(p->s[1].qp, IBV_QPS_ERR));
		break;
	case RETRY_DEST_RESET:
		ASSERT_EQ(0, rc_to_state(p->s[1].qp, IBV_QPS_RESET));
		break;
	case RETRY_DEST_INIT:
		ASSERT_EQ(0, rc_to_state(p->s[1].qp, IBV_QPS_RESET));
		ASSERT_EQ(0, rc_to_init(p->s[1].qp, RC_QP_ACCESS_ALL));
		break;
	default:
		break;
	}
}

FIXTURE_TEARDOWN(retry)
{
	env_teardown(_metadata, &self->e);
}

TEST_F(retry, retry_exc_err)
{
	struct env *e = &self->e;
	struct rc_pair *p = &e->p;
	struct ibv_sge sge = rc_sge(&e->local, 0, LEN);
	bool atomic = variant->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;

	if (atomic) {
		sge.length = 8;
		ASSERT_EQ(0, rc_post_atomic(p->s[0].qp, 1, variant->opcode,
					    IBV_SEND_SIGNALED, &sge,
					    (uintptr_t)e->remote.mem + 4096,
					    e->remote.mr->rkey, 1, 0));
	} else {
		ASSERT_EQ(0, rc_post(p->s[0].qp, 1, variant->opcode,
				     IBV_SEND_SIGNALED, &sge, 1,
				     (uintptr_t)e->remote.mem + 4096,
				     e->remote.mr->rkey));
	}
	ASSERT_EQ(0, rc_post(p->s[0].qp, 2, IBV_WR_SEND, IBV_SEND_SIGNALED,
			     &sge, 1, 0, 0));

	RC_WAIT_WC(p->s[0].scq, 1, IBV_WC_RETRY_EXC_ERR, -1);
	RC_WAIT_WC(p->s[0].scq, 2, IBV_WC_WR_FLUSH_ERR, -1);
	EXPECT_QP_STATE(IBV_QPS_ERR, p->s[0].qp);
	if (!atomic && variant->opcode != IBV_WR_RDMA_READ)
		RC_EXPECT_UNTOUCHED(&e->remote, 4096, LEN, 51);
	expect_flushes_new_work(_metadata, e, 0);
}

/* ---- Flushing ------------------------------------------------------- */

FIXTURE(flush)
{
	struct env e;
};

FIXTURE_SETUP(flush)
{
	struct rc_opts opts;

	rc_default_opts(&opts);
	env_setup(_metadata, &self->e, &opts);
	rc_pair_connect(_metadata, &self->e.p);
}

FIXTURE_TEARDOWN(flush)
{
	env_teardown(_metadata, &self->e);
}

/*
 * Unsignaled good WQEs before an error complete silently; the error and
 * every WQE after it complete, signaled or not, in order.
 */
TEST_F(flush, unsignaled_around_an_error)
{
	struct env *e = &self->e;
	struct rc_pair *p = &e->p;
	struct ibv_sge sge = rc_sge(&e->local, 0, 64), bad_sge = sge;
	uint64_t raddr = (uintptr_t)e->remote.mem + 4096;
	uint32_t rkey = e->remote.mr->rkey;

	bad_sge.lkey ^= 0x5a;
	rc_poison(e->remote.mem + 4096 + 64, LEN - 64, 59);
	ASSERT_EQ(0, rc_post(p->s[0].qp, 1, IBV_WR_RDMA_WRITE, 0, &sge, 1,
			     raddr, rkey));
	ASSERT_EQ(0, rc_post(p->s[0].qp, 2, IBV_WR_RDMA_WRITE, 0, &sge, 1,
			     raddr, rkey));
	ASSERT_EQ(0, rc_post(p->s[0].qp, 3, IBV_WR_RDMA_WRITE, 0, &bad_sge, 1,
			     raddr + 64, rkey));
	ASSERT_EQ(0, rc_post(p->s[0].qp, 4, IBV_WR_RDMA_WRITE,
			     IBV_SEND_SIGNALED, &sge, 1, raddr + 128, rkey));
	ASSERT_EQ(0, rc_post(p->s[0].qp, 5, IBV_WR_RDMA_WRITE, 0, &sge, 1,
			     raddr + 192, rkey));

	RC_WAIT_WC(p->s[0].scq, 3, IBV_WC_LOC_PROT_ERR, -1);
	RC_WAIT_WC(p->s[0].scq, 4, IBV_WC_WR_FLUSH_ERR, -1);
	RC_WAIT_WC(p->s[0].scq, 5, IBV_WC_WR_FLUSH_ERR, -1);
	rc_expect_no_wc(_metadata, p->s[0].scq);
	EXPECT_QP_STATE(IBV_QPS_ERR, p->s[0].qp);

	/* The two before the error were executed, the rest were not. */
	RC_EXPECT_PATTERN(e->remote.mem + 4096, 64, 50);
	RC_EXPECT_POISON(e->remote.mem + 4096 + 64, LEN - 64, 59);
	expect_flushes_new_work(_metadata, e, 0);
}

/* Moving a QP to ERR flushes its receives, in the order posted. */
TEST_F(flush, modify_to_err_flushes_receives)
{
	struct env *e = &self->e;
	struct rc_pair *p = &e->p;
	struct ibv_sge sge;
	int i;

	for (i = 0; i < 8; i++) {
		sge = rc_sge(&e->remote, i * 64, 64);
		ASSERT_EQ(0, rc_post_recv(p->s[1].qp, 100 + i, &sge, 1));
	}
	rc_expect_no_wc(_metadata, p->s[1].rcq);
	ASSERT_EQ(0, rc_to_state(p->s[1].qp, IBV_QPS_ERR));
	EXPECT_QP_STATE(IBV_QPS_ERR, p->s[1].qp);
	for (i = 0; i < 8; i++)
		RC_WAIT_WC(p->s[1].rcq, 100 + i, IBV_WC_WR_FLUSH_ERR, -1);
	expect_flushes_new_work(_metadata, e, 1);
}

/* Moving a QP to ERR flushes sends stuck in flight and queued behind. */
TEST_F(flush, modify_to_err_flushes_sends)
{
	struct env *e = &self->e;
	struct rc_pair *p = &e->p;
	struct ibv_sge sge = rc_sge(&e->local, 0, 64);
	struct ibv_wc wc;
	int i;

	/* No receive and rnr_retry 7: the first SEND retries forever. */
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, rc_post(p->s[0].qp, i, IBV_WR_SEND,
				     i % 2 ? IBV_SEND_SIGNALED : 0,
				     &sge, 1, 0, 0));
	EXPECT_EQ(0, rc_poll(p->s[0].scq, &wc, 1, RC_QUIET_MS));
	ASSERT_EQ(0, rc_to_state(p->s[0].qp, IBV_QPS_ERR));
	for (i = 0; i < 4; i++)
		RC_WAIT_WC(p->s[0].scq, i, IBV_WC_WR_FLUSH_ERR, -1);
	rc_expect_no_wc(_metadata, p->s[0].scq);
	expect_flushes_new_work(_metadata, e, 0);
}

/* ---- CQ overrun ------------------------------------------------------ */

FIXTURE(overrun)
{
	struct env e;
};

FIXTURE_SETUP(overrun)
{
	struct rc_opts opts;

	rc_default_opts(&opts);
	opts.cqe = 8;
	env_setup(_metadata, &self->e, &opts);
	rc_pair_connect(_metadata, &self->e.p);
}

FIXTURE_TEARDOWN(overrun)
{
	env_teardown(_metadata, &self->e);
}

/* Waits up to ms for IBV_EVENT_CQ_ERR on cq, acknowledging all events. */
static bool wait_cq_err(struct ibv_context *ctx, struct ibv_cq *cq, long ms)
{
	long deadline = rc_now_ms() + ms;
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	bool found = false;
	long left;

	while (!found && (left = deadline - rc_now_ms()) > 0) {
		if (poll(&pfd, 1, left) != 1 || ibv_get_async_event(ctx, &ev))
			break;
		found = ev.event_type == IBV_EVENT_CQ_ERR &&
			ev.element.cq == cq;
		ibv_ack_async_event(&ev);
	}
	return found;
}

/*
 * More completions than the CQ holds, none polled: the CQ overruns, its
 * owner hears of it (IBV_EVENT_CQ_ERR), and the QP whose completion did
 * not fit goes to ERR.  No completion is dropped silently, and tearing it
 * all down afterwards works.
 */
TEST_F(overrun, cq_err)
{
	struct env *e = &self->e;
	struct rc_pair *p = &e->p;
	struct ibv_cq *cq = p->s[0].scq;
	struct ibv_sge sge = rc_sge(&e->local, 0, 8);
	unsigned int n = 2 * cq->cqe + 4, i;

	if (n > p->s[0].cap.max_send_wr)
		n = p->s[0].cap.max_send_wr;
	ASSERT_LT((unsigned int)cq->cqe, n);
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, rc_post(p->s[0].qp, i, IBV_WR_RDMA_WRITE,
				     IBV_SEND_SIGNALED, &sge, 1,
				     (uintptr_t)e->remote.mem + 4096,
				     e->remote.mr->rkey));
	EXPECT_TRUE(wait_cq_err(p->ctx, cq, RC_POLL_MS))
		TH_LOG("no IBV_EVENT_CQ_ERR after %u completions on a CQ "
		       "of %d", n, cq->cqe);
	EXPECT_QP_STATE(IBV_QPS_ERR, p->s[0].qp);
	/* The other QP and its CQs have nothing to do with it. */
	EXPECT_QP_STATE(IBV_QPS_RTS, p->s[1].qp);
}

/* ---- Malformed work requests ---------------------------------------- */

FIXTURE(malformed)
{
	struct env e;
};

FIXTURE_SETUP(malformed)
{
	struct rc_opts opts;

	rc_default_opts(&opts);
	opts.max_send_sge = 2;
	env_setup(_metadata, &self->e, &opts);
	rc_pair_connect(_metadata, &self->e.p);
}

FIXTURE_TEARDOWN(malformed)
{
	env_teardown(_metadata, &self->e);
}

/*
 * What verbs lets through but the device rejects may be refused by the
 * provider at post time (EINVAL, bad_wr pointing at it) or completed with
 * the device's status; either way nothing executes.
 */
static void expect_rejected(struct __test_metadata *_metadata,
			    struct env *e, struct ibv_send_wr *wr,
			    enum ibv_wc_status status)
{
	struct rc_pair *p = &e->p;
	struct ibv_send_wr *bad = NULL;
	int ret;

	ret = ibv_post_send(p->s[0].qp, wr, &bad);
	if (ret) {
		EXPECT_EQ(EINVAL, ret);
		EXPECT_EQ(wr, bad);
		TH_LOG("refused at post time: %s", strerror(ret));
		rc_expect_no_wc(_metadata, p->s[0].scq);
		EXPECT_QP_STATE(IBV_QPS_RTS, p->s[0].qp);
		return;
	}
	RC_WAIT_WC(p->s[0].scq, wr->wr_id, status, -1);
	EXPECT_QP_STATE(IBV_QPS_ERR, p->s[0].qp);
	expect_flushes_new_work(_metadata, e, 0);
}

TEST_F(malformed, atomic_sge_not_8_bytes)
{
	struct env *e = &self->e;
	struct ibv_sge sge = rc_sge(&e->local, 0, 16);
	struct ibv_send_wr wr = {
		.wr_id = 1,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
		.send_flags = IBV_SEND_SIGNALED,
	};

	wr.wr.atomic.remote_addr = (uintptr_t)e->remote.mem + 4096;
	wr.wr.atomic.rkey = e->remote.mr->rkey;
	wr.wr.atomic.compare_add = 1;
	expect_rejected(_metadata, e, &wr, IBV_WC_LOC_LEN_ERR);
	RC_EXPECT_UNTOUCHED(&e->remote, 4096, LEN, 51);
}

TEST_F(malformed, unsupported_opcode)
{
	struct env *e = &self->e;
	struct ibv_sge sge = rc_sge(&e->local, 0, 16);
	struct ibv_send_wr wr = {
		.wr_id = 1,
		.sg_list = &sge,
		.num_sge = 1,
		/*
		 * LOCAL_INV is supported since 1.2 (tests/mw.c), FLUSH and
		 * ATOMIC_WRITE since 1.6 (tests/flush_atomic_write.c); TSO
		 * is a raw packet QP's.
		 */
		.opcode = IBV_WR_TSO,
		.send_flags = IBV_SEND_SIGNALED,
	};

	expect_rejected(_metadata, e, &wr, IBV_WC_LOC_QP_OP_ERR);
}

TEST_HARNESS_MAIN
