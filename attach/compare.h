/* Two runs compared by hang signature (docs/guide.md, "Comparing two runs"): lagscope-compare
 * A B and lagscope-run --baseline FILE. Each side is an events file (one JSON event a line:
 * lagscope-run's --events, the demo's --events jsonl, lagscope-run's own channel) or a folder
 * of hang reports; per signature, the hangs' count and total time on each side, marked new,
 * regressed, fixed or unchanged, told as a table, JUnit XML and Markdown. */
#ifndef LAGSCOPE_ATTACH_COMPARE_H
#define LAGSCOPE_ATTACH_COMPARE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define LAGSCOPE_COMPARE_FAILED 3 /* a new or regressed signature over the budget: as lagscope-run */

typedef enum lagscope__compare_status {
  LAGSCOPE__COMPARE_UNCHANGED = 0,
  LAGSCOPE__COMPARE_NEW,
  LAGSCOPE__COMPARE_REGRESSED,
  LAGSCOPE__COMPARE_FIXED
} lagscope__compare_status;

typedef struct lagscope__compare_group {
  char signature[17];
  char what[160];      /* the cause's label ("sleep · demo_stall_sleep"), else its kind */
  uint32_t count[2];   /* hangs of it in the baseline [0] and this run [1] */
  double total_ms[2], max_ms[2];
  uint32_t open[2];    /* of them, hangs not ended (the program killed or timed out during
                          them; a report left in_progress): over any budget, never fixed */
  lagscope__compare_status status;
  int failing;         /* new or regressed, and over the budget */
  int accepted;        /* a rules file's accept: told, never failing */
} lagscope__compare_group;

/* A fingerprint rule's signature (compare_rules.c): merged into `to`, or accepted (to == it). */
typedef struct lagscope__compare_rule {
  char signature[17], to[17];
  unsigned line; /* in the rules file, for its messages */
} lagscope__compare_rule;

typedef struct lagscope__compare_rules {
  lagscope__compare_rule *merges, *accepted;
  size_t merge_count, accept_count;
} lagscope__compare_rules;

typedef struct lagscope__compare {
  lagscope__compare_group *groups;
  size_t count, capacity;
  size_t *index, index_size; /* groups by signature (compare.c); NULL after the sort */
  size_t skipped[2];   /* lines or files that were not a hang of lagscope's, skipped */
  size_t unsigned_hangs[2]; /* hangs without a signature (written before lagscope had them) */
  /* What says each side holds a run: its run_started lines (lagscope-run's, with the run's
   * id), lines that are events of lagscope's, hang reports, hangs. A side with none holds no
   * run. */
  size_t runs[2], events[2], reports[2], hangs[2];
  size_t open_unknown[2]; /* hangs not ended (hang_began alone) whose report was not found */
  char run_id[2][64];  /* the first run_started's id, or "" */
  lagscope__compare_rules rules; /* read before the sides: applied as they are read */
} lagscope__compare;

typedef struct lagscope__compare_options {
  double tolerance_ms;  /* a total that grew by no more than this is unchanged (default 250) */
  double tolerance_pct; /* nor by no more than this share of the baseline's (default 25) */
  uint32_t budget_ms;   /* a new or regressed signature fails when a hang of it in this run
                           is longer; 0: every new or regressed one fails */
} lagscope__compare_options;

/* Adds the hangs at path (an events file or a report folder; side 0 the baseline, 1 this run).
 * Counted hangs only (an idle one is not), ended or ended by the program's end. 0; -1 with a
 * sentence in why (unreadable, not a file or folder, no memory); LAGSCOPE_COMPARE_NO_RUN with
 * one when path holds no run (an empty file or folder, a file not lagscope's: "no data" is
 * not a clean run). What was read stays. */
#define LAGSCOPE_COMPARE_NO_RUN (-2)
int lagscope__compare_read(lagscope__compare *c, int side, const char *path, char *why,
                           size_t why_size);
/* Adds a hang not ended of side's run (lagscope-run: the program killed during it), by the
 * signature of its report's last rewrite ("" or not one: counted without a signature). 0, or
 * -1 without memory. Allocates. */
int lagscope__compare_add_open(lagscope__compare *c, int side, const char *signature,
                               const char *what, double duration_ms);
/* Marks each group and whether it fails; returns how many fail. */
size_t lagscope__compare_judge(lagscope__compare *c, const lagscope__compare_options *o);
/* The table, one line per signature, the failing and changed ones first. */
void lagscope__compare_table(FILE *out, const lagscope__compare *c,
                             const lagscope__compare_options *o);
/* JUnit XML, one testcase per signature, well-formed whatever the labels hold; 0 or -1 with a
 * sentence in why (the file refused, as lagscope__output_open says, or not written). */
int lagscope__compare_junit(const char *path, const lagscope__compare *c,
                            const lagscope__compare_options *o, char *why, size_t why_size);
/* Markdown for a CI job's summary (GitHub's $GITHUB_STEP_SUMMARY), a label never markup or
 * HTML; 0 or -1 with a sentence in why. */
int lagscope__compare_markdown(const char *path, const lagscope__compare *c,
                               const lagscope__compare_options *o, char *why, size_t why_size);
/* The comparison as one JSON object (lagscope-compare --json, and lagscope-run --json's
 * "comparison"): the options, both runs' ids, the counts, and per signature its status, whether
 * it fails, its label and each side's count, total, longest and hangs not ended. */
void lagscope__compare_json_object(FILE *out, const lagscope__compare *c,
                                   const lagscope__compare_options *o);
/* That object, alone, to the file at path; 0 or -1 with a sentence in why. */
int lagscope__compare_json(const char *path, const lagscope__compare *c,
                           const lagscope__compare_options *o, char *why, size_t why_size);
void lagscope__compare_free(lagscope__compare *c);
/* ---- compare_rules.c: a fingerprint rules file (docs/guide.md, "Fingerprint rules") ---- */
/* Reads path's rules into c, before its sides are read. 0; -1 with a sentence in why naming
 * the file and the line (an unknown rule, a word not a signature, a signature merged twice). A */
int lagscope__compare_read_rules(lagscope__compare *c, const char *path, char *why,
                                 size_t why_size);
/* The signature a merge rule counts signature as (itself when none). F */
const char *lagscope__compare_merged(const lagscope__compare *c, const char *signature);
/* 1 when an accept rule names signature (or one merged into it). F */
int lagscope__compare_accepted(const lagscope__compare *c, const char *signature);
void lagscope__compare_free_rules(lagscope__compare *c); /* A */

/* The status's word: "unchanged", "new", "regressed", "fixed". */
const char *lagscope__compare_status_name(lagscope__compare_status s);

#endif
