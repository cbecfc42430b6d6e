/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca work queue entries: where a send or receive WQE is read from guest
 * memory and checked, once.
 *
 * A send WQE is read when the requester takes it from the SQ ring and is
 * checked completely before anything uses it: its opcode against the QP
 * type (the opcode table of qhca_hw.h, qhca_wr_info()), its flags, its
 * SGEs or inline data, a UD WQE's address vector, an XRC INI WQE's SRQ, a
 * memory operation's fields.  The QhcaSwqe that comes out is what the
 * requester sends, what a memory operation runs (qhca-mw.c) and what the
 * flush path completes; nobody reads the WQE again, except inline data,
 * which stays in the WQE's slot until it is sent.
 *
 * A receive WQE has one reader for an RQ (qhca_rq_take()) and an SRQ
 * (qhca_srq_take()) alike.  A WQE the engine never took is only peeked
 * at, for the wr_id and opcode of its flush CQE.
 *
 * Everything here is guest input: a malformed WQE is a guest error and
 * completes with LOC_QP_OP_ERR; a message too long, or an SGE its key
 * does not cover, completes with LOC_LEN_ERR or LOC_PROT_ERR, as an HCA
 * reports them.
 */
#include "qemu/osdep.h"
#include "qemu/cutils.h"
#include "qhca.h"
#include "qhca-eth.h"
#include "trace.h"

/* Bit 31 of a UD WQE's Q_Key asks for the QP's own (IBA vol. 1, 10.2.4). */

/* What a value that is no opcode completes as: a CQE needs an opcode. */
static const struct qhca_wr_info qhca_wr_none = {
    .wc_opcode = QHCA_WC_SEND,
};

static const struct qhca_wr_info *qhca_wqe_info(uint8_t opcode)
{
    const struct qhca_wr_info *info = qhca_wr_info(opcode);

    return info ? info : &qhca_wr_none;
}

/* SGEs that fit in a slot of 2^@stride_log2 bytes after a @hdr header. */
static unsigned qhca_wqe_max_sge(unsigned stride_log2, size_t hdr)
{
    return MIN(QHCA_MAX_SGE, ((1u << stride_log2) - hdr) /
                             sizeof(struct qhca_sge));
}

/* @n SGEs at @addr into @sge; false if they are not in guest RAM. */
static bool qhca_wqe_read_sges(QhcaState *s, uint64_t addr, unsigned n,
                               QhcaSge *sge)
{
    struct qhca_sge raw[QHCA_MAX_SGE];
    unsigned i;

    assert(n <= QHCA_MAX_SGE);
    if (n && !qhca_dma_read(s, addr, raw, n * sizeof(raw[0]))) {
        return false;
    }
    for (i = 0; i < n; i++) {
        sge[i].addr = le64_to_cpu(raw[i].addr);
        sge[i].length = le32_to_cpu(raw[i].length);
        sge[i].lkey = le32_to_cpu(raw[i].lkey);
    }
    return true;
}

/*
 * The fields of a LOCAL_INV, BIND_MW or REG_MR WQE that need no table;
 * the objects it names are checked when it runs (qhca_local_exec()).
 */
static uint8_t qhca_swqe_check_mem(QhcaState *s, QhcaSwqe *w,
                                   const struct qhca_sq_wqe *h,
                                   const char **why)
{
    struct qhca_sq_wqe_bind b;
    struct qhca_sq_wqe_reg_mr r;

    if (h->num_sge || (h->flags & QHCA_WQE_F_INLINE) || h->rsvd0) {
        *why = "memory operation with data";
        return QHCA_WC_LOC_QP_OP_ERR;
    }
    switch (h->opcode) {
    case QHCA_WR_LOCAL_INV:
        if (h->imm_data || h->remote_addr || h->inline_len ||
            h->compare_add || h->swap || h->flush_len || h->flush ||
            !buffer_is_zero(h->rsvd1, sizeof(h->rsvd1))) {
            *why = "LOCAL_INV reserved field set";
            return QHCA_WC_LOC_QP_OP_ERR;
        }
        w->rkey = le32_to_cpu(h->rkey);
        return QHCA_WC_SUCCESS;
    case QHCA_WR_BIND_MW:
        if (!s->params.max_mws) {
            *why = "no memory windows";
            return QHCA_WC_LOC_QP_OP_ERR;
        }
        QEMU_BUILD_BUG_ON(sizeof(b) != sizeof(*h));
        memcpy(&b, h, sizeof(b));
        if (b.rsvd1 || b.rsvd2 || b.rsvd3[1] || b.rsvd3[2] || b.rsvd3[3] ||
            (b.access & ~(QHCA_ACCESS_REMOTE_WRITE | QHCA_ACCESS_REMOTE_READ |
                          QHCA_ACCESS_REMOTE_ATOMIC)) ||
            (b.mw_type != QHCA_MW_TYPE_1 && b.mw_type != QHCA_MW_TYPE_2)) {
            *why = "BIND_MW reserved field, access or type";
            return QHCA_WC_LOC_QP_OP_ERR;
        }
        w->rkey = le32_to_cpu(b.mw_key);
        w->remote_addr = le64_to_cpu(b.addr);
        w->mem.length = le64_to_cpu(b.length);
        w->mem.mr_lkey = le32_to_cpu(b.mr_lkey);
        w->mem.access = b.access;
        w->mem.mw_type = b.mw_type;
        return QHCA_WC_SUCCESS;
    default:
        QEMU_BUILD_BUG_ON(sizeof(r) != sizeof(*h));
        memcpy(&r, h, sizeof(r));
        if (r.rsvd1 || r.rsvd2[1] || r.rsvd2[2] || r.rsvd2[3] ||
            (r.access & ~(QHCA_ACCESS_ALL | QHCA_ACCESS_FLUSH_GLOBAL)) ||
            ((r.access & (QHCA_ACCESS_REMOTE_WRITE |
                          QHCA_ACCESS_REMOTE_ATOMIC)) &&
             !(r.access & QHCA_ACCESS_LOCAL_WRITE)) ||
            r.page_shift < QHCA_MR_MIN_PAGE_SHIFT ||
            r.page_shift > QHCA_MR_MAX_PAGE_SHIFT ||
            !r.npages || le32_to_cpu(r.npages) > QHCA_FAST_REG_MAX_PAGES ||
            !r.length || le64_to_cpu(r.length) > QHCA_MAX_MR_SIZE ||
            (le64_to_cpu(r.pbl_addr) & 7)) {
            *why = "REG_MR reserved field, access or range";
            return QHCA_WC_LOC_QP_OP_ERR;
        }
        w->rkey = le32_to_cpu(r.mr_key);
        w->remote_addr = le64_to_cpu(r.iova);
        w->mem.length = le64_to_cpu(r.length);
        w->mem.pbl_addr = le64_to_cpu(r.pbl_addr);
        w->mem.npages = le32_to_cpu(r.npages);
        w->mem.access = r.access;
        w->mem.page_shift = r.page_shift;
        return QHCA_WC_SUCCESS;
    }
}

/*
 * 1.5: the RoCEv2 addresses of a UD WQE on an Ethernet port.  The GRH is
 * its IP header, so it is required; sgid_index names a ROCE_V2 entry of
 * the GID table, of the IP version of dgid; dmac is the next hop's MAC,
 * a unicast one, or for a multicast dgid the MAC that group maps to.
 */
static const char *qhca_swqe_check_roce_av(QhcaState *s,
                                           const struct qhca_sq_wqe_ud *u)
{
    const uint8_t *sgid = qhca_gid_get(s, u->sgid_index);
    uint8_t mac[6];

    if (!(u->av_flags & QHCA_AV_F_GRH)) {
        return "UD WQE without a GRH on an Ethernet port";
    }
    if (!sgid) {
        return "UD SGID index is not a RoCEv2 GID";
    }
    if (buffer_is_zero(u->dgid, sizeof(u->dgid)) ||
        qhca_gid_is_v4(u->dgid) != qhca_gid_is_v4(sgid)) {
        return "UD DGID zero or of another IP version than the SGID";
    }
    if (qhca_mcast_gid_mac(u->dgid, mac)) {
        if (memcmp(u->dmac, mac, sizeof(mac))) {
            return "UD DMAC is not the DGID's multicast MAC";
        }
    } else if ((u->dmac[0] & 1) || buffer_is_zero(u->dmac, sizeof(u->dmac))) {
        return "UD DMAC not unicast";
    }
    return NULL;
}

/* The address vector a UD WQE carries where others have remote fields. */
static uint8_t qhca_swqe_check_av(QhcaQp *qp, QhcaSwqe *w,
                                  const struct qhca_sq_wqe *h,
                                  const char **why)
{
    bool eth = qhca_port_is_eth(qp->s);
    struct qhca_sq_wqe_ud u;
    QhcaAv *av = &w->av;
    uint32_t qkey;

    QEMU_BUILD_BUG_ON(sizeof(u) != sizeof(*h));
    memcpy(&u, h, sizeof(u));
    /* 1.5: dmac is reserved on an IB port. */
    if (u.rsvd0 || u.rsvd1 || u.rsvd2 || (u.av_flags & QHCA_AV_F_RSVD) ||
        (!eth && !buffer_is_zero(u.dmac, 6))) {
        *why = "UD WQE with reserved fields set";
        return QHCA_WC_LOC_QP_OP_ERR;
    }
    if (le32_to_cpu(u.dest_qpn) & ~QHCA_UD_QPN_MASK ||
        u.sl > QHCA_AV_SL_MAX) {
        *why = "UD destination QPN or SL out of range";
        return QHCA_WC_LOC_QP_OP_ERR;
    }
    if ((u.av_flags & QHCA_AV_F_GRH) &&
        (le32_to_cpu(u.flow_label) > QHCA_AV_FLOW_LABEL_MAX ||
         (!eth && u.sgid_index != 0))) {
        /* An IB port has one GID. */
        *why = "UD GRH with a bad flow label or SGID index";
        return QHCA_WC_LOC_QP_OP_ERR;
    }
    *why = eth ? qhca_swqe_check_roce_av(qp->s, &u) : NULL;
    if (*why) {
        return QHCA_WC_LOC_QP_OP_ERR;
    }
    qkey = le32_to_cpu(u.qkey);
    av->dest_qpn = le32_to_cpu(u.dest_qpn);
    av->qkey = (qkey & QHCA_UD_QKEY_USE_QP) ? qp->qkey : qkey;
    av->dlid = le16_to_cpu(u.dlid);
    av->sl = u.sl;
    av->flags = u.av_flags;
    memcpy(av->dgid, u.dgid, sizeof(av->dgid));
    av->flow_label = le32_to_cpu(u.flow_label);
    av->hop_limit = u.hop_limit;
    av->tclass = u.traffic_class;
    av->sgid_index = u.sgid_index;
    memcpy(av->dmac, u.dmac, sizeof(av->dmac));
    trace_qhca_ud_wqe(qp->qpn, w->idx, av->dest_qpn, av->qkey, av->dlid,
                      av->sl, av->flags);
    return QHCA_WC_SUCCESS;
}

/*
 * The message of a WQE: inline data, or SGEs that their lkeys cover with
 * the access the opcode needs (a READ or atomic writes its result).
 */
static uint8_t qhca_swqe_check_data(QhcaState *s, QhcaQp *qp, QhcaSwqe *w,
                                    const struct qhca_sq_wqe *h,
                                    const char **why)
{
    uint64_t slot = qhca_sq_slot(qp, w->idx);
    uint32_t room = (1u << qp->sq_stride_log2) - sizeof(*h);
    uint64_t total = 0;
    uint8_t access;
    unsigned i;

    if (h->flags & QHCA_WQE_F_INLINE) {
        if (!(w->info->flags & QHCA_WR_F_INLINE)) {
            *why = "inline data for a READ or atomic";
            return QHCA_WC_LOC_QP_OP_ERR;
        }
        /* Only the stride bounds it (the spec): it is read from there. */
        if (le32_to_cpu(h->inline_len) > room) {
            *why = "inline data beyond the stride";
            return QHCA_WC_LOC_QP_OP_ERR;
        }
        w->length = le32_to_cpu(h->inline_len);
        return QHCA_WC_SUCCESS;
    }

    if (h->num_sge > qhca_wqe_max_sge(qp->sq_stride_log2, sizeof(*h))) {
        *why = "more SGEs than the stride or max_sge holds";
        return QHCA_WC_LOC_QP_OP_ERR;
    }
    if (!qhca_wqe_read_sges(s, slot + sizeof(*h), h->num_sge, w->sge)) {
        qhca_dma_ring_failed(s, "SQ", slot);
        *why = "SQ ring left guest RAM";
        return QHCA_WC_LOC_QP_OP_ERR;
    }
    w->num_sge = h->num_sge;
    for (i = 0; i < w->num_sge; i++) {
        total += w->sge[i].length;
    }
    if (total > QHCA_MAX_MSG_SIZE) {
        *why = "message longer than 2^31 bytes";
        return QHCA_WC_LOC_LEN_ERR;
    }
    w->length = total;
    if ((w->info->flags & QHCA_WR_F_ATOMIC) &&
        (w->num_sge != 1 || w->sge[0].length != sizeof(uint64_t))) {
        *why = "atomic without one 8-byte SGE";
        return QHCA_WC_LOC_LEN_ERR;
    }

    access = (w->info->flags & QHCA_WR_F_RESPONSE) ?
             QHCA_ACCESS_LOCAL_WRITE : 0;
    for (i = 0; i < w->num_sge; i++) {
        if (w->sge[i].length &&
            !qhca_mr_lookup(s, w->sge[i].lkey, qp->pdn, w->sge[i].addr,
                            w->sge[i].length, access)) {
            *why = "SGE not covered by its lkey";
            return QHCA_WC_LOC_PROT_ERR;
        }
    }
    return QHCA_WC_SUCCESS;
}

/*
 * 1.6: the operands of FLUSH and ATOMIC_WRITE beyond the table's.  FLUSH
 * carries no data; its flush byte is a placement type the device knows
 * (GLOBAL, PERSISTENT or both) and a level (RANGE, MR), and a range is at
 * most a message long, as its RETH says.  ATOMIC_WRITE's data, from SGEs
 * or inline, is exactly 8 bytes; alignment is the responder's to check.
 */
static uint8_t qhca_swqe_check_placement(QhcaSwqe *w,
                                         const struct qhca_sq_wqe *h,
                                         const char **why)
{
    uint8_t type = h->flush & QHCA_FLUSH_TYPE;
    uint8_t level = h->flush & QHCA_FLUSH_LEVEL;

    if (h->opcode == QHCA_WR_ATOMIC_WRITE) {
        if (w->length != sizeof(uint64_t)) {
            *why = "ATOMIC_WRITE data is not 8 bytes";
            return QHCA_WC_LOC_LEN_ERR;
        }
        return QHCA_WC_SUCCESS;
    }
    if (h->num_sge) {
        *why = "FLUSH with data";
        return QHCA_WC_LOC_QP_OP_ERR;
    }
    if (!type || (type & ~(QHCA_FLUSH_GLOBAL | QHCA_FLUSH_PERSISTENT)) ||
        (level != QHCA_FLUSH_RANGE && level != QHCA_FLUSH_MR) ||
        (h->flush & QHCA_FLUSH_RSVD)) {
        *why = "FLUSH placement type or level unknown";
        return QHCA_WC_LOC_QP_OP_ERR;
    }
    if (le32_to_cpu(h->flush_len) > QHCA_MAX_MSG_SIZE) {
        *why = "FLUSH range longer than 2^31 bytes";
        return QHCA_WC_LOC_LEN_ERR;
    }
    w->flush = h->flush;
    w->flush_len = le32_to_cpu(h->flush_len);
    return QHCA_WC_SUCCESS;
}

/* Check a send WQE whose common fields @w has; returns its status. */
static uint8_t qhca_swqe_check(QhcaState *s, QhcaQp *qp, QhcaSwqe *w,
                               const struct qhca_sq_wqe *h, const char **why)
{
    bool raw = qp->type == QHCA_QPT_RAW_ETH;
    uint8_t status;

    /*
     * The opcode table knows nothing of RAW_ETH, whose one opcode is
     * SEND (a whole frame).  The GSI QP is a UD QP here (qhca-qp.c).
     */
    if (raw ? h->opcode != QHCA_WR_SEND
            : !qhca_wr_allowed(h->opcode, qp->type)) {
        *why = w->info->qp_types ? "opcode not allowed on this QP type"
                                 : "unknown opcode";
        return QHCA_WC_LOC_QP_OP_ERR;
    }
    if (h->flags & QHCA_WQE_F_RSVD) {
        *why = "reserved flags set";
        return QHCA_WC_LOC_QP_OP_ERR;
    }
    if (w->info->flags & QHCA_WR_F_LOCAL) {
        return qhca_swqe_check_mem(s, w, h, why);
    }
    if (qp->type == QHCA_QPT_UD) {
        status = qhca_swqe_check_av(qp, w, h, why);
    } else {
        w->remote_addr = le64_to_cpu(h->remote_addr);
        w->rkey = le32_to_cpu(h->rkey);
        w->compare_add = le64_to_cpu(h->compare_add);
        w->swap = le64_to_cpu(h->swap);
        status = QHCA_WC_SUCCESS;
    }
    if (status == QHCA_WC_SUCCESS) {
        status = qhca_swqe_check_data(s, qp, w, h, why);
    }
    if (status == QHCA_WC_SUCCESS && (w->info->flags & QHCA_WR_F_READ_ACK)) {
        status = qhca_swqe_check_placement(w, h, why);
    }
    /* UD has no path: a message is one packet of the port's MTU. */
    if (status == QHCA_WC_SUCCESS && qp->type == QHCA_QPT_UD &&
        w->length > qhca_qp_mtu(qp)) {
        *why = "UD message longer than the port MTU";
        return QHCA_WC_LOC_LEN_ERR;
    }
    /* RAW_ETH: one whole Ethernet frame, without FCS. */
    if (status == QHCA_WC_SUCCESS && raw &&
        (w->length < QHCA_ETH_FRAME_MIN || w->length > QHCA_ETH_FRAME_MAX)) {
        *why = "RAW_ETH frame shorter than its header or over the MTU";
        return QHCA_WC_LOC_LEN_ERR;
    }
    return status;
}

/*
 * Read the send WQE at SQ index @idx into @w and check it.  w->status is
 * SUCCESS, or the status it completes with when its turn comes (a
 * malformed one is also a guest error), and *@why says why.  False if the
 * SQ ring left guest RAM: the device failed and nothing was taken.
 */
bool qhca_swqe_read(QhcaState *s, QhcaQp *qp, uint16_t idx, QhcaSwqe *w,
                    const char **why)
{
    uint64_t slot = qhca_sq_slot(qp, idx);
    struct qhca_sq_wqe h;

    if (!qhca_dma_read(s, slot, &h, sizeof(h))) {
        qhca_dma_ring_failed(s, "SQ", slot);
        return false;
    }
    memset(w, 0, offsetof(QhcaSwqe, sge));
    w->info = qhca_wqe_info(h.opcode);
    w->idx = idx;
    w->wr_id = le64_to_cpu(h.wr_id);
    w->opcode = h.opcode;
    w->flags = h.flags;
    w->imm = h.imm_data;        /* bytes as posted, as they go on */
    w->xrc_srqn = qp->type == QHCA_QPT_XRC_INI ? le32_to_cpu(h.xrc_srqn) : 0;
    *why = NULL;
    w->status = qhca_swqe_check(s, qp, w, &h, why);
    trace_qhca_wqe_send(qp->qpn, idx, w->opcode, w->flags, w->num_sge,
                        w->length, w->remote_addr, w->rkey, w->status);
    if (!qhca_is_ready(s)) {
        return false;
    }
    if (w->status == QHCA_WC_LOC_QP_OP_ERR) {
        qhca_guest_error(s, QHCA_ERR_NONE, bad_wqe, "QP %u SQ WQE %u: %s",
                         qp->qpn, idx, *why);
    }
    return true;
}

/*
 * Read the receive WQE in the slot of 2^@stride_log2 bytes at @slot, the
 * one parse an RQ and an SRQ share.  Reading changes nothing in the
 * device: what taking the WQE means, and what each failure costs, is the
 * caller's (an RQ takes it before its SGEs fail, an SRQ fails whole).
 * @r is left alone if the header cannot be read; otherwise it gets the
 * wr_id and, only when all is well, the SGEs.  *@num_sge is the count
 * the WQE gives, for the caller's trace and guest error.
 */
QhcaRwqeRead qhca_rwqe_read(QhcaState *s, uint64_t slot, unsigned stride_log2,
                            QhcaRwqe *r, uint8_t *num_sge)
{
    struct qhca_rq_wqe h;

    if (!qhca_dma_read(s, slot, &h, sizeof(h))) {
        return QHCA_RWQE_HEADER_UNREADABLE;
    }
    *num_sge = h.num_sge;
    r->wr_id = le64_to_cpu(h.wr_id);
    r->num_sge = 0;
    if (h.num_sge > qhca_rwqe_max_sge(stride_log2)) {
        return QHCA_RWQE_TOO_MANY_SGES;
    }
    if (!qhca_wqe_read_sges(s, slot + sizeof(h), h.num_sge, r->sge)) {
        return QHCA_RWQE_SGES_UNREADABLE;
    }
    r->num_sge = h.num_sge;
    return QHCA_RWQE_OK;
}

unsigned qhca_rwqe_max_sge(unsigned stride_log2)
{
    return qhca_wqe_max_sge(stride_log2, sizeof(struct qhca_rq_wqe));
}

/*
 * Take the receive WQE at rq_ci of @qp's own RQ into @r.  Returns SUCCESS,
 * LOC_QP_OP_ERR for a malformed WQE (taken all the same, to complete
 * with that status) or FATAL_ERR when the RQ ring left guest RAM.
 */
uint8_t qhca_rq_take(QhcaState *s, QhcaQp *qp, QhcaRwqe *r)
{
    uint64_t slot = qhca_rq_slot(qp, qp->rq_ci);
    QhcaRwqeRead rd;
    uint8_t num_sge;

    rd = qhca_rwqe_read(s, slot, qp->rq_stride_log2, r, &num_sge);
    if (rd == QHCA_RWQE_HEADER_UNREADABLE) {
        qhca_dma_ring_failed(s, "RQ", slot);
        return QHCA_WC_FATAL_ERR;
    }
    /* Taken, even when malformed or its SGEs cannot be read. */
    r->idx = qp->rq_ci;
    qhca_count(s, QHCA_CNT_RQ_WQES, 1);
    trace_qhca_wqe_recv(qp->qpn, r->idx, num_sge);

    if (rd == QHCA_RWQE_TOO_MANY_SGES) {
        qhca_guest_error(s, QHCA_ERR_NONE, bad_rwqe,
                         "QP %u RQ WQE %u: %u SGEs, room for %u",
                         qp->qpn, r->idx, num_sge,
                         qhca_rwqe_max_sge(qp->rq_stride_log2));
        return QHCA_WC_LOC_QP_OP_ERR;
    }
    if (rd == QHCA_RWQE_SGES_UNREADABLE) {
        qhca_dma_ring_failed(s, "RQ", slot);
        return QHCA_WC_FATAL_ERR;
    }
    return QHCA_WC_SUCCESS;
}

/*
 * The wr_id and completion opcode of the WQE at @idx of @qp's SQ or RQ
 * that the engine never took, for its flush CQE.  False if the ring left
 * guest RAM (the device failed).
 */
bool qhca_wqe_peek(QhcaState *s, QhcaQp *qp, bool sq, uint16_t idx,
                   uint64_t *wr_id, uint8_t *wc_opcode)
{
    uint64_t addr = sq ? qhca_sq_slot(qp, idx) : qhca_rq_slot(qp, idx);
    uint8_t hdr[16];

    QEMU_BUILD_BUG_ON(offsetof(struct qhca_sq_wqe, opcode) >= sizeof(hdr));
    QEMU_BUILD_BUG_ON(sizeof(struct qhca_rq_wqe) > sizeof(hdr));
    if (!qhca_dma_read(s, addr, hdr, sizeof(hdr))) {
        qhca_dma_ring_failed(s, sq ? "SQ" : "RQ", addr);
        return false;
    }
    *wr_id = ldq_le_p(hdr);
    *wc_opcode = sq ? qhca_wqe_info(hdr[offsetof(struct qhca_sq_wqe,
                                                 opcode)])->wc_opcode
                    : QHCA_WC_RECV;
    return true;
}
