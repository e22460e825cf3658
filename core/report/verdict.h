/* A hang's verdict, between the files that share it: verdict.c makes it and writes the
 * report's "cause"; report_json.c asks for it and lends the verdict its
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

/* A phase of a hang: a run of its consecutive samples that waited in the same call on the same
 * thing (the call and the argument naming its target: an fd, a path, a mutex), or ran on the
 * CPU. Phases follow the time order: a call that comes back after another is a new phase. A
 * phase runs from its first sample's time (the first one from the hang's start) to the next
 * phase's first sample's time (the last one to the hang's end), so the phases' times add up
 * to the hang's. A hang that read a FIFO for 1.5 s and then waited 1.0 s to open it has two. */
#define LAGSCOPE__VERDICT_PHASES 8
#define LAGSCOPE__VERDICT_FUNCTION_MAX 256
typedef struct lagscope__verdict_phase {
  int kind;                     /* lagscope__cause_kind */
  int32_t syscall;              /* -1: on the CPU, or in no call */
  uintptr_t arg;
  uint32_t count;               /* samples */
  uint32_t first, last;         /* its first and last sample's index */
  uint64_t from_ns, to_ns;      /* its time, on the samples' clock */
  const lagscope__stack *stack; /* its last sample: the details */
  /* On the CPU: the function of the app's code most of its samples were in (see
   * phase_function in verdict.c); "" otherwise. */
  char function[LAGSCOPE__VERDICT_FUNCTION_MAX];
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
  /* The phases told, in time order: those of a fifth of the hang's time or more (five at most,
   * so the bound is never reached; past it a phase would count as time elsewhere). */
  lagscope__verdict_phase phases[LAGSCOPE__VERDICT_PHASES];
  int phase_count;
  lagscope__verdict_phase top; /* the longest phase of the dominant kind; count 0: none */
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

/* ---- between verdict.c and phases.c ---- */
/* verdict.c's: one stack's kind, its frames resolved through c. A (c's cache may grow) */
lagscope__cause_kind lagscope__verdict_classify(lagscope__report_ctx *c, const lagscope__stack *s);
/* verdict.c's: where a stack was in the app's code (its innermost frame of the app's code, by
 * name or as "module+0xoffset"; else its innermost named frame not lagscope's); buf holds a
 * made name. A (c's cache may grow) */
const char *lagscope__verdict_app_function(lagscope__report_ctx *c, const lagscope__stack *s,
                                           char *buf, size_t size);
/* verdict.c's: what a blocked stack waits on, named when it was captured, else now. A */
void lagscope__verdict_wait_target(lagscope__report_ctx *c, const lagscope__report_data *r,
                                   const lagscope__stack *s, char *out, size_t size);
/* phases.c's: r's phases into v (v->kind set): those told, in time order, and v->top. A */
void lagscope__verdict_make_phases(lagscope__report_ctx *c, const lagscope__report_data *r,
                                   lagscope__verdict *v);
/* phases.c's: 1 when a sample s of kind is in phase p (the same call on the same thing). F */
int lagscope__verdict_same_phase(const lagscope__verdict_phase *p, lagscope__cause_kind kind,
                                 const lagscope__stack *s);
uint64_t lagscope__verdict_phase_ns(const lagscope__verdict_phase *p); /* its time. F */
/* phases.c's: the time of every phase in the same call on the same thing as like. A */
uint64_t lagscope__verdict_call_ns(lagscope__report_ctx *c, const lagscope__report_data *r,
                                   const lagscope__verdict_phase *like);
/* phases.c's: the report's cause.phases, the phases told. A */
void lagscope__verdict_write_phases(lagscope__json_writer *w, lagscope__report_ctx *c,
                                    const lagscope__report_data *r, const lagscope__verdict *v);

/* report_json.c's: a stack's frames as the array named key, innermost first. 0, or
 * LAGSCOPE_ENOMEM. A */
int lagscope__report_stack_write(lagscope__json_writer *w, const char *key,
                                 lagscope__report_ctx *c, const lagscope__stack *stack);

#endif /* LAGSCOPE_VERDICT_H */
