/* What a report is worked out on, shared by the files that write one and no other: its JSON
 * (report_json.c) and its verdict (verdict.c). Kept in call_tree.c:
 *
 *   the report context: a frame cache, every distinct (address, is_return) of a report resolved
 *     once, as the call tree merges on and every stack of the report is written from;
 *   the call tree: the main thread's samples merged from the outermost frame down.
 *
 * The rest of the core sees only report.h's entry points. Tags as in internal.h: A allocates
 * (lagscope__alloc), F neither allocates nor locks; nothing here locks. Memory: a context and
 * a tree hold only lagscope's heap, and are freed with their _free function. */
#ifndef LAGSCOPE_CALL_TREE_H
#define LAGSCOPE_CALL_TREE_H

#include "internal.h"

/* ---- working tables (call_tree.c's own; here because the structs below hold them) --------- */
/* Open addressing with linear probing over entries kept elsewhere. */
typedef struct lagscope__report_table {
  struct lagscope__report_slot *slots;
  uint32_t mask, used;
} lagscope__report_table;

/* A growable array of fixed-size entries. */
typedef struct lagscope__report_vec {
  void *items;
  uint32_t len;
  size_t capacity, item_size;
} lagscope__report_vec;

/* ---- the report context: a frame cache over the resolver --------------------------------- */
typedef struct lagscope__report_ctx {
  lagscope__resolve_fn resolve;
  void *resolve_ctx;
  lagscope__report_vec entries; /* resolved stack frames */
  lagscope__report_table entry_index;
  lagscope__report_vec idents; /* what the call tree merges frames on */
  lagscope__report_table ident_index;
} lagscope__report_ctx;

/* An empty cache over resolve (which may be NULL: every frame unknown). Free it with
 * lagscope__report_ctx_free, also when this failed. A */
int lagscope__report_ctx_init(lagscope__report_ctx *c, lagscope__resolve_fn resolve, void *ctx);
void lagscope__report_ctx_free(lagscope__report_ctx *c);
/* The cache index of one captured address (a return address is looked up at address - 1, so
 * the same address as a PC and as a return address are two entries), resolving it the first
 * time. 0, or LAGSCOPE_ENOMEM. A */
int lagscope__report_ctx_resolve(lagscope__report_ctx *c, uintptr_t address, int is_return,
                                 uint32_t *index);
/* The frame at a cache index; valid until the next lagscope__report_ctx_resolve. F */
const lagscope__stack_frame *lagscope__report_ctx_entry(const lagscope__report_ctx *c,
                                                        uint32_t index);
/* What the thread was doing when the stack was taken: "cpu", the system call it was blocked in
 * ("nanosleep", "futex", ...; on Darwin the trap its innermost frame names), "blocked" (off
 * the CPU in no call), or "unknown". buf holds a made-up name ("syscall_<nr>"). A */
const char *lagscope__report_run_state(lagscope__report_ctx *c, const lagscope__stack *stack,
                                       char *buf, size_t size);

/* The frames of a stack that hold an address. F */
static inline uint32_t lagscope__stack_depth(const lagscope__stack *s) {
  return s->depth < LAGSCOPE__MAX_STACK_FRAMES ? s->depth : LAGSCOPE__MAX_STACK_FRAMES;
}

/* ---- the call tree ------------------------------------------------------------------------ */
#define LAGSCOPE__TREE_NONE UINT32_MAX /* no node */

typedef struct lagscope__tree_node {
  uint32_t ident;
  uint32_t entry;  /* the cache index of the first sample's entry that reached this node */
  uint32_t parent; /* LAGSCOPE__TREE_NONE for the root */
  uint32_t count;  /* samples passing through */
  uint32_t self;   /* samples ending here */
  uint32_t first_child, next_sibling; /* LAGSCOPE__TREE_NONE: none */
  uint32_t child_count;
} lagscope__tree_node;

/* Node 0 is the root, "(all samples)". */
typedef struct lagscope__call_tree {
  lagscope__tree_node *nodes;
  uint32_t len, capacity;
  lagscope__report_table children; /* (parent, ident) → node */
  uint64_t truncated_samples;
  uint32_t *sample_end;  /* per sample, the node where its stack ended (the timeline) */
  uint32_t *written_id;  /* per node, its "id" in the JSON: preorder position as written */
  uint32_t next_id;
} lagscope__call_tree;

/* r's samples merged into t (zeroed before), each outermost frame first, resolved through c;
 * past the tree's bound a sample is cut short and counted in truncated_samples. Free t with
 * lagscope__call_tree_free, also when this failed. A */
int lagscope__call_tree_build(lagscope__call_tree *t, lagscope__report_ctx *c,
                              const lagscope__report_data *r);
/* Relinks every node's children heaviest first (ties: first seen) and numbers the nodes in the
 * order they are written, depth first (written_id). 0, or LAGSCOPE_ENOMEM. A */
int lagscope__call_tree_order(lagscope__call_tree *t);
/* The heaviest child of node at, or LAGSCOPE__TREE_NONE where the heaviest path stops: at a
 * node whose own samples (those that ended in it) outweigh its heaviest child, where the time
 * was spent. F */
uint32_t lagscope__call_tree_heaviest_child(const lagscope__call_tree *t, uint32_t at);
void lagscope__call_tree_free(lagscope__call_tree *t);

#endif /* LAGSCOPE_CALL_TREE_H */
