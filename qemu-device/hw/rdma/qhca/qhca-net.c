/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca NIC glue: the Ethernet port on a QEMU netdev (interface 1.5).
 *
 * With the netdev property set the port is Ethernet: it sends and receives
 * RoCEv2 frames on that netdev, and the frames that are not RoCEv2 for one
 * of its GIDs go to the port's NIC (qhca-nic.c).  Without it the port is
 * the IB port of before 1.5 and nothing here runs.
 *
 * Threads.  The QEMU net API is the main loop's (it wants the BQL), the
 * transport is the engine thread's (under the device lock, never the BQL).
 * Two bounded queues of frames join them:
 *
 *  - tx: qhca_net_tx() copies a frame in, from whoever holds the device
 *    lock; a bottom half sends the queue on the main loop.  When the peer
 *    cannot take more, qemu_send_packet_async() keeps the frame and calls
 *    back later; the bottom half sends nothing until then.  The transport
 *    asks qhca_net_tx_full() before it builds a frame and, if so, stops the
 *    QP (qhca_wire_tx_blocked()); the question marks the queue, and once
 *    the bottom half has drained it to QHCA_NET_TX_RESUME frames it tells
 *    the engine (qhca_engine_tx_room()).  What still finds it full (a
 *    frame no QP paces) is dropped (WIRE_DROPS).
 *  - rx: the netdev's receive callback copies a frame in and wakes the
 *    engine; when the queue is full it refuses the frame (returns 0), so
 *    that QEMU holds it and stops reading the backend, and the engine asks
 *    for the rest (qemu_flush_queued_packets(), from a bottom half) once
 *    it has made room.  qhca_net_rx_run() takes the queue each round.
 *    Frames arrive in the order they were sent, as on a real link: once
 *    QEMU holds one for us, every later one waits behind it (rx_held)
 *    until the bottom half has delivered the held ones, however soon the
 *    engine thread makes room.
 *
 * A queue's lock guards its indexes; the producer copies a frame in under
 * it, the consumer uses its oldest frame outside it, as no producer
 * touches that slot until the head moves.  Locks nest BQL, device lock,
 * queue lock.
 *
 * Every received frame is untrusted: its length is checked here, its
 * headers by qhca_roce_decode() or by the NIC, and a frame that fails is
 * counted, traced and dropped, never seen by the guest.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/lockable.h"
#include "qemu/main-loop.h"
#include "net/eth.h"
#include "qhca.h"
#include "qhca-eth.h"
#include "trace.h"

/*
 * Frames each queue holds: the unacknowledged packets of several QPs
 * (QHCA_ETH_MAX_UNACKED each), so that a burst of a few QPs is taken
 * whole.  The receive queue can be made shorter (x-rx-queue, for tests:
 * a short queue is full at once).
 */
#define QHCA_NET_RING_SLOTS     QHCA_NET_RX_QUEUE_MAX
/*
 * The QPs stopped by a full transmit queue go on when it is down to this:
 * half, so that they fill it again in large steps, not one frame a wake.
 */
#define QHCA_NET_TX_RESUME      (QHCA_NET_RING_SLOTS / 2)
/* Frames one engine round takes before the QPs get their turn. */
#define QHCA_NET_RX_BATCH       64

typedef struct QhcaFrameRing {
    QemuMutex lock;
    uint32_t slots;             /* frames it holds */
    uint8_t *buf;               /* slots of QHCA_ETH_FRAME_MAX bytes */
    uint32_t len[QHCA_NET_RING_SLOTS];
    uint32_t head;              /* oldest frame */
    uint32_t count;
    bool refused;               /* a push found it full since the last pop */
} QhcaFrameRing;

typedef struct QhcaNet {
    QhcaFrameRing tx;           /* device lock holders -> main loop */
    QhcaFrameRing rx;           /* main loop -> engine */
    QEMUBH *tx_bh;
    QEMUBH *rx_flush_bh;
    bool tx_waiting;            /* BQL: the peer holds a frame of ours */
    bool rx_held;               /* BQL: QEMU holds frames for us */
    QhcaPacket *pkt;            /* engine: a received frame, decoded */
} QhcaNet;

static void qhca_frames_init(QhcaFrameRing *r, uint32_t slots)
{
    assert(slots && slots <= QHCA_NET_RING_SLOTS);
    qemu_mutex_init(&r->lock);
    r->slots = slots;
    /* Untouched slots cost no memory: only a busy link fills them. */
    r->buf = g_malloc((size_t)slots * QHCA_ETH_FRAME_MAX);
    r->head = 0;
    r->count = 0;
    r->refused = false;
}

static void qhca_frames_fini(QhcaFrameRing *r)
{
    g_free(r->buf);
    qemu_mutex_destroy(&r->lock);
}

static uint8_t *qhca_frames_slot(QhcaFrameRing *r, uint32_t slot)
{
    return r->buf + (size_t)slot * QHCA_ETH_FRAME_MAX;
}

/* Copy a frame in; false (and the ring remembers it) if it is full. */
static bool qhca_frames_push(QhcaFrameRing *r, const uint8_t *frame,
                           size_t len)
{
    uint32_t slot;

    assert(len <= QHCA_ETH_FRAME_MAX);
    QEMU_LOCK_GUARD(&r->lock);
    if (r->count == r->slots) {
        r->refused = true;
        return false;
    }
    slot = (r->head + r->count) % r->slots;
    memcpy(qhca_frames_slot(r, slot), frame, len);
    r->len[slot] = len;
    r->count++;
    return true;
}

/* The oldest frame, which stays in place until qhca_frames_pop(). */
static bool qhca_frames_peek(QhcaFrameRing *r, uint8_t **frame, size_t *len)
{
    QEMU_LOCK_GUARD(&r->lock);
    if (!r->count) {
        return false;
    }
    *frame = qhca_frames_slot(r, r->head);
    *len = r->len[r->head];
    return true;
}

/* Free the oldest frame; true if a push was refused since the last pop. */
static bool qhca_frames_pop(QhcaFrameRing *r)
{
    bool refused;

    QEMU_LOCK_GUARD(&r->lock);
    assert(r->count);
    r->head = (r->head + 1) % r->slots;
    r->count--;
    refused = r->refused;
    r->refused = false;
    return refused;
}

static bool qhca_frames_full(QhcaFrameRing *r)
{
    QEMU_LOCK_GUARD(&r->lock);
    if (r->count == r->slots) {
        r->refused = true;
        return true;
    }
    return false;
}

/*
 * Free the oldest frame; true if a push was refused or the queue found
 * full since, and it is now down to @low frames (that is then forgotten).
 */
static bool qhca_frames_pop_to(QhcaFrameRing *r, uint32_t low)
{
    QEMU_LOCK_GUARD(&r->lock);
    assert(r->count);
    r->head = (r->head + 1) % r->slots;
    r->count--;
    if (r->refused && r->count <= low) {
        r->refused = false;
        return true;
    }
    return false;
}

/* Empty it; true if a push was refused since the last pop. */
static bool qhca_frames_clear(QhcaFrameRing *r)
{
    bool refused;

    QEMU_LOCK_GUARD(&r->lock);
    r->head = 0;
    r->count = 0;
    refused = r->refused;
    r->refused = false;
    return refused;
}

/* ------------------------------------------------------------------ */
/* Transmit                                                            */
/* ------------------------------------------------------------------ */

void qhca_net_tx(QhcaState *s, const uint8_t *frame, size_t len)
{
    QhcaNet *n = s->net;

    if (!n) {
        return;
    }
    if (len < QHCA_ETH_FRAME_MIN || len > QHCA_ETH_FRAME_MAX) {
        /* The callers build or check every frame: a bug, not the guest. */
        trace_qhca_net_tx_drop(len, "bad length");
        qhca_count(s, QHCA_CNT_WIRE_DROPS, 1);
        return;
    }
    if (!qhca_link_is_up(s)) {
        trace_qhca_net_tx_drop(len, "link down");
        qhca_count(s, QHCA_CNT_WIRE_DROPS, 1);
        return;
    }
    if (!qhca_frames_push(&n->tx, frame, len)) {
        trace_qhca_net_tx_drop(len, "transmit queue full");
        qhca_count(s, QHCA_CNT_WIRE_DROPS, 1);
        return;
    }
    qemu_bh_schedule(n->tx_bh);
}

/*
 * Would qhca_net_tx() drop a frame for a full queue now?  The transport
 * asks before it builds a frame; a yes is remembered, and the bottom half
 * calls qhca_engine_tx_room() once the queue has drained.
 */
bool qhca_net_tx_full(QhcaState *s)
{
    return s->net && qhca_frames_full(&s->net->tx);
}

static void qhca_net_tx_bh(void *opaque);

/* The peer took the frame it held: send the rest. */
static void qhca_net_tx_done(NetClientState *nc, ssize_t len)
{
    QhcaState *s = qemu_get_nic_opaque(nc);

    s->net->tx_waiting = false;
    qemu_bh_schedule(s->net->tx_bh);
}

/* Main loop: put the queued frames on the netdev. */
static void qhca_net_tx_bh(void *opaque)
{
    QhcaState *s = opaque;
    QhcaNet *n = s->net;
    uint8_t *frame;
    size_t len;

    while (!n->tx_waiting && s->nic && qhca_frames_peek(&n->tx, &frame, &len)) {
        /* The link may have gone down since the frame was queued. */
        if (!qhca_link_is_up(s)) {
            trace_qhca_net_tx_drop(len, "link down");
            qhca_count(s, QHCA_CNT_WIRE_DROPS, 1);
        } else {
            trace_qhca_net_tx(len);
            qhca_count(s, QHCA_CNT_ETH_TX_FRAMES, 1);
            /* 0: the peer queued a copy and calls qhca_net_tx_done(). */
            if (!qemu_send_packet_async(qemu_get_queue(s->nic), frame, len,
                                        qhca_net_tx_done)) {
                n->tx_waiting = true;
            }
        }
        if (qhca_frames_pop_to(&n->tx, QHCA_NET_TX_RESUME)) {
            trace_qhca_net_tx_room(QHCA_NET_TX_RESUME);
            qhca_engine_tx_room(s);
        }
    }
}

/* ------------------------------------------------------------------ */
/* Receive                                                             */
/* ------------------------------------------------------------------ */

/*
 * Main loop, BQL.  A frame QEMU's net layer may hand us at once; when we
 * say no it queues the frame, and the frames after it, for
 * qhca_net_rx_flush_bh().  The engine thread makes room at any moment,
 * even between two frames of one read of the backend, and its net layer
 * hands a frame over whenever this says yes, held frames or not: so no
 * frame is taken while any is held, or it would overtake them.  RC drops
 * a packet that comes before its predecessor and waits for its transport
 * timer (an nvme-rdma write stalled on a READ response overtaken so).
 */
static bool qhca_net_can_receive(NetClientState *nc)
{
    QhcaState *s = qemu_get_nic_opaque(nc);
    QhcaNet *n = s->net;

    /* A device that is not ready drops frames: it takes them all. */
    if (!qhca_is_ready(s)) {
        return true;
    }
    if (!n->rx_held && qhca_frames_full(&n->rx)) {
        n->rx_held = true;
    }
    return !n->rx_held;
}

/*
 * What the receive callback returns for a frame it took, dropped or not.
 * To QEMU's net layer 0 means "not taken, hold it and stop delivering",
 * so an empty frame (a stream or socket backend carries a length of 0
 * from any peer) must not return its size: the port would receive
 * nothing more.
 */
static ssize_t qhca_net_taken(size_t size)
{
    return size ? size : 1;
}

/*
 * Main loop, BQL: run the engine's round right here, on the thread that
 * received the frame, when the engine is idle, instead of waking the
 * engine thread.  Every frame handed to the engine thread costs a wake-up
 * and a wait for a host CPU (two busy TCG vCPUs hold both cores of a small
 * host); here the packet is placed, its ACK or response queued, and the
 * QPs it made runnable (an ACK that opens a requester's window) step in
 * the same main-loop pass, and qhca_net_tx_bh() sends what they queued on
 * the next.  The round takes the doorbells first, as the thread's does (a
 * receive WQE posted before the frame came is seen first), and does
 * nothing while the VM is stopped (no DMA).  The device lock comes after
 * the BQL, as for admin commands; a trylock, so the main loop never waits
 * for the engine thread's round.  True if the frame was taken here.
 */
static bool qhca_net_rx_here(QhcaState *s)
{
    if (qatomic_read(&s->engine.paused) || qemu_mutex_trylock(&s->lock)) {
        return false;
    }
    if (qhca_engine_round_locked(s)) {
        /* A bounded round: the thread does the rest. */
        qhca_engine_wake(s);
    }
    qemu_mutex_unlock(&s->lock);
    return true;
}

/*
 * Main loop, BQL: a frame from the netdev.  A multicast backend (socket
 * mcast=) echoes what the port sent: the frames from our own MAC go.
 */
static ssize_t qhca_net_receive(NetClientState *nc, const uint8_t *buf,
                                size_t size)
{
    QhcaState *s = qemu_get_nic_opaque(nc);
    const uint8_t *mac = s->conf.macaddr.a;

    if (!qhca_is_ready(s)) {
        trace_qhca_net_rx_drop(size, "device not ready");
        return qhca_net_taken(size);
    }
    if (!qhca_link_is_up(s)) {
        trace_qhca_net_rx_drop(size, "link down");
        qhca_count(s, QHCA_CNT_WIRE_DROPS, 1);
        return qhca_net_taken(size);
    }
    if (size < QHCA_ETH_FRAME_MIN || size > QHCA_ETH_FRAME_MAX) {
        trace_qhca_net_rx_drop(size, "not an Ethernet frame of our MTU");
        qhca_count(s, QHCA_CNT_ETH_RX_FRAMES, 1);
        if (size > QHCA_ETH_FRAME_MAX) {
            qhca_count(s, QHCA_CNT_ETH_RX_NO_BUF, 1);
        }
        return qhca_net_taken(size);
    }
    /*
     * The MAC filter here, not in the engine: on a multicast bus every
     * port sees every frame, its own echoes included, and those must not
     * take the queue's room or wake the engine.
     */
    if (!memcmp(buf + 6, mac, 6)) {
        trace_qhca_net_rx_drop(size, "from our own MAC");
    } else if (memcmp(buf, mac, 6) && !is_multicast_ether_addr(buf)) {
        trace_qhca_net_rx_drop(size, "for another MAC");
    } else if (!qhca_frames_push(&s->net->rx, buf, size)) {
        /* QEMU keeps it and qhca_net_rx_flush_bh() asks for it again. */
        trace_qhca_net_rx_full(size);
        s->net->rx_held = true;
        return 0;
    } else if (!qhca_net_rx_here(s)) {
        qhca_engine_wake(s);
    }
    qhca_count(s, QHCA_CNT_ETH_RX_FRAMES, 1);
    return qhca_net_taken(size);
}

/* Main loop: the engine made room, let QEMU deliver what it held back. */
static void qhca_net_rx_flush_bh(void *opaque)
{
    QhcaState *s = opaque;

    /* In order: what it holds first, then what comes next. */
    s->net->rx_held = false;
    if (s->nic) {
        qemu_flush_queued_packets(qemu_get_queue(s->nic));
    }
}

/*
 * Is @frame RoCEv2 for one of the port's GIDs, or a multicast group a QP
 * of the port joined?  QHCA_NET_ROCE_OURS with
 * @pkt decoded if so; QHCA_NET_ROCE_DROPPED if it is but failed a check
 * (counted and traced); QHCA_NET_ROCE_NOT if it is anything else.
 */
QhcaNetRoce qhca_net_roce_take(QhcaState *s, const uint8_t *frame,
                               size_t len, QhcaPacket *pkt)
{
    uint8_t dgid[16];
    const char *why;

    if (!qhca_roce_classify(frame, len, dgid)) {
        return QHCA_NET_ROCE_NOT;
    }
    /* Any other IP goes to the NIC, as the spec has it. */
    if (qhca_gid_find(s, dgid) < 0 && !qhca_mcast_has_gid(s, dgid)) {
        return QHCA_NET_ROCE_NOT;
    }
    why = qhca_roce_decode(frame, len, pkt);
    if (why) {
        trace_qhca_net_roce_drop(len, why);
        qhca_count(s, QHCA_CNT_ROCE_RX_DROPS, 1);
        if (why == qhca_roce_bad_icrc) {
            qhca_count(s, QHCA_CNT_ICRC_ERRORS, 1);
        }
        return QHCA_NET_ROCE_DROPPED;
    }
    return QHCA_NET_ROCE_OURS;
}

/*
 * A frame from the netdev that passed the MAC filter (a RoCEv2 frame to
 * one of our IPs but another MAC is not ours either): to the transport,
 * to the NIC, or nowhere.
 */
static void qhca_net_rx_frame(QhcaState *s, const uint8_t *frame, size_t len)
{
    switch (qhca_net_roce_take(s, frame, len, s->net->pkt)) {
    case QHCA_NET_ROCE_OURS:
        qhca_wire_receive(s, s->net->pkt);
        break;
    case QHCA_NET_ROCE_NOT:
        qhca_nic_receive(s, frame, len);
        break;
    default:
        break;
    }
}

void qhca_net_rx_run(QhcaState *s)
{
    QhcaNet *n = s->net;
    bool refused = false;
    uint8_t *frame;
    size_t len;
    unsigned i;

    if (!n) {
        return;
    }
    for (i = 0; i < QHCA_NET_RX_BATCH; i++) {
        if (!qhca_is_ready(s) || !qhca_frames_peek(&n->rx, &frame, &len)) {
            break;
        }
        qhca_net_rx_frame(s, frame, len);
        refused |= qhca_frames_pop(&n->rx);
    }
    if (refused) {
        qemu_bh_schedule(n->rx_flush_bh);
    }
    if (i == QHCA_NET_RX_BATCH) {
        /* More may be waiting: another round, after the QPs' turn. */
        qhca_engine_wake(s);
    }
}

/* ------------------------------------------------------------------ */
/* The netdev                                                          */
/* ------------------------------------------------------------------ */

/* Main loop: QMP set_link, the backend's cable. */
static void qhca_net_link_status_changed(NetClientState *nc)
{
    QhcaState *s = qemu_get_nic_opaque(nc);

    trace_qhca_net_link(!nc->link_down);
    qhca_fault_backend_link(s, !nc->link_down);
}

static void qhca_net_cleanup(NetClientState *nc)
{
    QhcaState *s = qemu_get_nic_opaque(nc);

    s->nic = NULL;
}

static NetClientInfo qhca_net_info = {
    .type = NET_CLIENT_DRIVER_NIC,
    .size = sizeof(NICState),
    .can_receive = qhca_net_can_receive,
    .receive = qhca_net_receive,
    .link_status_changed = qhca_net_link_status_changed,
    .cleanup = qhca_net_cleanup,
};

/* The link-layer property, checked against the netdev property. */
static bool qhca_net_link_layer(QhcaState *s, Error **errp)
{
    const char *ll = s->params.link_layer;
    bool netdev = s->conf.peers.ncs[0] != NULL;

    if (!ll) {
        s->link_layer = netdev ? QHCA_LINK_LAYER_ETH : QHCA_LINK_LAYER_IB;
    } else if (!strcmp(ll, "eth")) {
        if (!netdev) {
            error_setg(errp, "qhca: link-layer=eth needs a netdev");
            return false;
        }
        s->link_layer = QHCA_LINK_LAYER_ETH;
    } else if (!strcmp(ll, "ib")) {
        if (netdev) {
            /* No IB fabric over a netdev yet: only the loopback port. */
            error_setg(errp, "qhca: link-layer=ib takes no netdev");
            return false;
        }
        s->link_layer = QHCA_LINK_LAYER_IB;
    } else {
        error_setg(errp, "qhca: link-layer=%s is neither eth nor ib", ll);
        return false;
    }
    return true;
}

bool qhca_net_realize(QhcaState *s, Error **errp)
{
    DeviceState *dev = DEVICE(s);
    QhcaNet *n;

    if (!qhca_net_link_layer(s, errp)) {
        return false;
    }
    if (!qhca_port_is_eth(s)) {
        return true;
    }
    n = g_new0(QhcaNet, 1);
    qhca_frames_init(&n->tx, QHCA_NET_RING_SLOTS);
    qhca_frames_init(&n->rx, s->params.rx_queue);
    n->tx_bh = qemu_bh_new_guarded(qhca_net_tx_bh, s,
                                   &dev->mem_reentrancy_guard);
    n->rx_flush_bh = qemu_bh_new_guarded(qhca_net_rx_flush_bh, s,
                                         &dev->mem_reentrancy_guard);
    n->pkt = g_malloc(sizeof(QhcaPacket) + QHCA_MAX_MTU);
    s->net = n;

    qemu_macaddr_default_if_unset(&s->conf.macaddr);
    s->nic = qemu_new_nic(&qhca_net_info, &s->conf,
                          object_get_typename(OBJECT(s)), dev->id,
                          &dev->mem_reentrancy_guard, s);
    qemu_format_nic_info_str(qemu_get_queue(s->nic), s->conf.macaddr.a);
    /* A netdev may start with its link down (-netdev ...,link=off). */
    qatomic_set(&s->backend_link_down, qemu_get_queue(s->nic)->link_down);
    trace_qhca_net_realize(MAC_ARG(s->conf.macaddr.a));
    return true;
}

void qhca_net_unrealize(QhcaState *s)
{
    QhcaNet *n = s->net;

    if (!n) {
        return;
    }
    /* May call qhca_net_tx_done() for a frame the peer still held. */
    if (s->nic) {
        qemu_del_nic(s->nic);
    }
    s->nic = NULL;
    qemu_bh_delete(n->tx_bh);
    qemu_bh_delete(n->rx_flush_bh);
    qhca_frames_fini(&n->tx);
    qhca_frames_fini(&n->rx);
    g_free(n->pkt);
    g_free(n);
    s->net = NULL;
}

/* Under the BQL and the device lock: neither side of a queue is running. */
void qhca_net_reset(QhcaState *s)
{
    QhcaNet *n = s->net;

    if (!n) {
        return;
    }
    if (qhca_frames_clear(&n->tx)) {
        /* No QP that waited is left stopped for good. */
        qhca_engine_tx_room(s);
    }
    if (qhca_frames_clear(&n->rx)) {
        qemu_bh_schedule(n->rx_flush_bh);
    }
}
