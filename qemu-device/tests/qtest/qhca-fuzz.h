/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qhca-fuzz's model of what it created and its random helpers, shared by
 * qhca-fuzz.c (the driver of runs, the base grammar: commands, WQEs,
 * doorbells, registers), qhca-fuzz-verbs.c (the grammar of XRC, memory
 * windows, fast registration, multicast and SRQ scenarios) and
 * qhca-fuzz-faults.c (fault injection, the link, the virtual clock) and
 * qhca-fuzz-odp.c (on-demand paging, 1.8).
 * With the Ethernet port (1.5), qhca-fuzz-verbs.c also plays the rest of
 * the segment: frames in, frames out (FzEth).
 */
#ifndef QHCA_FUZZ_H
#define QHCA_FUZZ_H

#include "qhca-hostile.h"

#define FZ_NCQ      6
#define FZ_NQP      6
#define FZ_NMR      6
#define FZ_NH       4           /* extra UARs, PDs, EQs */
#define FZ_NSRQ     3
#define FZ_NXRCD    2
#define FZ_NMW      4
#define FZ_NFR      3           /* fast-reg MRs */
#define FZ_NMCAST   3           /* multicast groups the grammar uses */
#define FZ_SCRATCH  (1u << 20)
/* The device's id on the command line, for qom-set of link-up. */
#define FZ_QOM_ID   "fzhca"

typedef struct FzEth FzEth;

typedef struct Fz {
    QhcaTest *t;
    Hx h;
    GRand *r;
    bool h_live;
    QhcaCq cq[FZ_NCQ];
    bool cq_live[FZ_NCQ];
    QhcaQp qp[FZ_NQP];
    bool qp_live[FZ_NQP];
    uint8_t qp_type[FZ_NQP];
    bool qp_srq[FZ_NQP];
    QhcaSrq srq[FZ_NSRQ];
    bool srq_live[FZ_NSRQ];
    uint32_t mr[FZ_NMR];
    bool mr_live[FZ_NMR];
    uint32_t uar[FZ_NH], pd[FZ_NH], eq[FZ_NH];
    bool uar_live[FZ_NH], pd_live[FZ_NH], eq_live[FZ_NH];
    uint32_t phys_key;
    uint64_t scratch;
    uint32_t eq_head;
    uint64_t steps;
    GHashTable *pairs;          /* "cmd op status", "cqe op status" */
    FILE *report;

    /* qhca-fuzz-verbs.c's objects */
    uint32_t xrcd[FZ_NXRCD];
    bool xrcd_live[FZ_NXRCD];
    uint32_t mw[FZ_NMW];        /* the window's current key */
    uint8_t mw_type[FZ_NMW];
    bool mw_live[FZ_NMW];
    uint32_t fr[FZ_NFR];        /* the fast-reg MR's current key */
    uint32_t fr_pages[FZ_NFR];
    bool fr_live[FZ_NFR];
    uint32_t bind_key;          /* a physical MR with MW_BIND; 0: none */
    uint32_t caps;              /* device_cap_flags of QUERY_DEVICE */
    bool msix;                  /* MSI-X enabled (vectors stay masked) */
    /*
     * The link, as the device keeps it: up while the host's cable is in
     * (link-up) and the guest has not taken it down (INJECT_FAULT); the
     * one does not undo the other.  QUERY_PORT must agree.
     */
    bool cable_pulled;          /* the last link-up qom-set said false */
    bool link_injected_down;    /* LINK_DOWN injected, no LINK_UP since */

    /*
     * 1.7: device memory, BAR 4 (dm_size 0: the run has none), and a
     * device memory MR over [dm_off, dm_off + dm_len) of it at iova 0,
     * which SGEs and remote addresses aim at now and then (0: none).
     */
    uint64_t dm_size;
    QPCIBar bar4;
    uint32_t dm_key;
    uint64_t dm_off, dm_len;

    /*
     * 1.8: the run's explicit and implicit ODP MRs (qhca-fuzz-odp.c), 0
     * when the device has no on-demand paging or the grammar dropped them.
     */
    uint32_t odp_key;
    uint32_t odp_imp_key;

    /* The run's port is Ethernet: qhca-fuzz-verbs.c's model of the wire. */
    FzEth *eth;
} Fz;

/* Random values */
uint32_t fz_below(Fz *f, uint32_t n);
bool fz_chance(Fz *f, unsigned percent);
uint64_t fz_rand64(Fz *f);
uint64_t fz_interesting(Fz *f);
bool fz_hits_admin(Fz *f, uint64_t addr, uint64_t len);
uint64_t fz_addr(Fz *f, uint64_t len);
void fz_mutate(Fz *f, void *buf, size_t len);
void fz_pair(Fz *f, const char *kind, unsigned op, unsigned status);

/* The model */
int fz_slot(Fz *f, const bool *live, int n, bool want_live);
uint32_t fz_handle(Fz *f, const uint32_t *h, const bool *live, int n);
uint32_t fz_cqn(Fz *f);
uint32_t fz_qpn(Fz *f);
uint32_t fz_srqn(Fz *f);
uint32_t fz_key(Fz *f);
void fz_resync(Fz *f);

/* Work requests */
struct qhca_sge fz_sge(Fz *f);
void fz_send(Fz *f);
void fz_poll(Fz *f);

/* qhca-fuzz-verbs.c */
void fzv_forget(Fz *f);
uint32_t fzv_key(Fz *f);
uint32_t fzv_xrc_srqn(Fz *f);
void fzv_cmd(Fz *f);
void fzv_build(Fz *f);
void fzv_memop(Fz *f);

/* qhca-fuzz-verbs.c: the Ethernet port (every fze_* needs f->eth) */
void fze_init(Fz *f);
void fze_fini(Fz *f);
void fze_resynced(Fz *f);
uint8_t fze_connect_rc(Fz *f, int slot, uint32_t dest);
uint8_t fze_av(Fz *f, int slot, uint32_t dest);
void fze_ud_av(Fz *f, struct qhca_sq_wqe_ud *u);
void fze_destroyed(Fz *f, uint32_t qpn);
void fze_drain(Fz *f);
void fze_alive(Fz *f, const char *after);
void fze_frame(Fz *f);
void fze_answer(Fz *f);
void fze_storm(Fz *f);
void fze_stall(Fz *f);
void fze_cmd(Fz *f);

/* qhca-fuzz-odp.c */
void fzo_resynced(Fz *f);
struct qhca_sge fzo_sge(Fz *f);
bool fzo_remote(Fz *f, uint64_t *addr, uint32_t *rkey);
void fzo_answer(Fz *f);
void fzo_traffic(Fz *f);
void fzo_cmd(Fz *f);

/* qhca-fuzz-faults.c */
void fzv_resynced(Fz *f);
void fzv_fault(Fz *f);
uint8_t fzv_inject(Fz *f, uint16_t type, uint32_t handle);
void fzv_cable(Fz *f, bool up);
void fzv_check_link(Fz *f, const char *after);
void fzv_clock(Fz *f);

#endif /* QHCA_FUZZ_H */
