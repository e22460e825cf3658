/* A hang's verdict, between the two files that share it: core/cause/verdict.c makes it and
 * writes the report's "cause"; core/report/report_json.c asks for it and lends the verdict its
 * stack writer (a lock owner's stack is in the cause). The rest of the core sees only
 * report.h's lagscope__report_json and lagscope__report_cause_json. Tags as in internal.h. */
#ifndef LAGSCOPE_VERDICT_H
#define LAGSCOPE_VERDICT_H

#include "report/call_tree.h"

#define LAGSCOPE__VERDICT_CHAIN_MAX 8 /* lock owners followed, at most */

typedef struct lagscope__verdict_share {
  int kind; /* lagscope__cause_kind */
  uint32_t count;
} lagscope__verdict_share;

/* A phase of a hang: its samples that waited in the same call on the same thing (the call and
 * its first argument: an fd, a path, a mutex), or ran on the CPU. A hang that read a FIFO for
 * 1.5 s and then waited 1.0 s to open it has two. */
#define LAGSCOPE__VERDICT_PHASES 8
typedef struct lagscope__verdict_phase {
  int kind;                     /* lagscope__cause_kind */
  int32_t syscall;              /* -1: on the CPU, or in no call */
  uintptr_t arg;
  uint32_t count;               /* samples */
  uint32_t first, last;         /* its first and last sample's index */
  const lagscope__stack *stack; /* its last sample: the details */
} lagscope__verdict_phase;

/* The verdict: the main thread's samples by kind (its share of each), the dominant one with
 * what it waited on and, for a lock, the owners' chain from the capture of every thread at the
 * hang's start; a chain that comes back on itself is a deadlock. */
typedef struct lagscope__verdict {
  lagscope__verdict_share shares[LAGSCOPE__CAUSE_COUNT]; /* heaviest first */
  uint32_t total;                      /* samples classified */
  lagscope__cause_kind kind;
  double share;                        /* of kind */
  const lagscope__stack *main;         /* the main thread's stack the details come from */
  int main_index;                      /* main's index in r->threads; -1: a sample */
  int chain[LAGSCOPE__VERDICT_CHAIN_MAX], chain_len; /* the lock owners */
  int cycle_from;                      /* >= 0: a deadlock, from chain[cycle_from] */
  /* The phases, the first LAGSCOPE__VERDICT_PHASES met; told: those of a fifth of the samples
   * or more, in time order (indexes into phases). */
  lagscope__verdict_phase phases[LAGSCOPE__VERDICT_PHASES];
  int phase_count, told[LAGSCOPE__VERDICT_PHASES], told_count;
  char summary[1024], label[LAGSCOPE__LABEL_MAX];
} lagscope__verdict;

/* r's verdict into v, its frames resolved through c. telling: the heaviest stack's telling
 * function (names a cpu, sleep or wait hang in the label); NULL when not known. A (c's cache
 * may grow) */
void lagscope__verdict_make(lagscope__report_ctx *c, const lagscope__report_data *r,
                            const char *telling, lagscope__verdict *v);
/* "deadlock", or the name of v's kind. F */
const char *lagscope__verdict_kind(const lagscope__verdict *v);
/* The report's "cause" member: the verdict and the main thread's details (syscall, target,
 * mutex, owner), the cycle of a deadlock, and every kind's share. A */
void lagscope__verdict_write(lagscope__json_writer *w, lagscope__report_ctx *c,
                             const lagscope__report_data *r, const lagscope__verdict *v);

/* report_json.c's: a stack's frames as the array named key, innermost first. 0, or
 * LAGSCOPE_ENOMEM. A */
int lagscope__report_stack_write(lagscope__json_writer *w, const char *key,
                                 lagscope__report_ctx *c, const lagscope__stack *stack);

#endif /* LAGSCOPE_VERDICT_H */
