/* The report's call tree and what it is built on (call_tree.h): open-addressing tables, the
 * frame cache (every distinct (address, is_return) resolved once per report, and merged by
 * identity), and the tree of the main thread's samples merged from the outermost frame down.
 * Written as JSON by report_json.c.
 *
 * Contents:
 *   1. hashing
 *   2. open-addressing tables (address cache, identities, tree children)
 *   3. the frame cache: every distinct (address, is_return) resolved once per report
 *   4. the call tree: samples merged from the outermost frame down
 *
 * Memory: every table comes from lagscope__alloc and is freed by lagscope__report_ctx_free or
 * lagscope__call_tree_free. */
#define _POSIX_C_SOURCE 200809L

#include "report/call_tree.h"

#include <stdio.h>
#include <string.h>

/* A report's tree holds at most this many nodes; past it, samples are cut short and the root
 * says "truncated". 20000 nodes are ≈ 5 MB of JSON. */
#define REPORT_MAX_NODES 20000u

/* ---- 1. hashing ----------------------------------------------------------------------------- */

static uint64_t mix64(uint64_t x) { /* splitmix64's finaliser */
  x ^= x >> 30, x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27, x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

static uint64_t hash_string(uint64_t h, const char *s) { /* FNV-1a; NULL differs from "" */
  if (s == NULL) return mix64(h ^ 0x5bd1e995u);
  h ^= 0xcbf29ce484222325ULL;
  for (; *s != '\0'; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
  return mix64(h);
}

static int same_string(const char *a, const char *b) {
  if (a == b) return 1;
  if (a == NULL || b == NULL) return 0;
  return strcmp(a, b) == 0;
}

/* ---- 2. tables -----------------------------------------------------------------------------
 * Open addressing with linear probing; a slot holds an entry's hash and its index + 1 (0:
 * empty). The entries live in arrays of their own; the callers compare keys. */
typedef struct lagscope__report_slot {
  uint32_t hash, index;
} slot;

static int table_init(lagscope__report_table *t, uint32_t min_capacity) {
  uint32_t capacity = 16;
  while (capacity < min_capacity && capacity < (1u << 30)) capacity <<= 1;
  t->slots = lagscope__alloc(sizeof(slot) * capacity);
  if (t->slots == NULL) return LAGSCOPE_ENOMEM;
  t->mask = capacity - 1;
  t->used = 0;
  return 0;
}

static void table_free(lagscope__report_table *t) {
  lagscope__dealloc(t->slots);
  t->slots = NULL;
}

/* Keeps the table at most half full; call before a lookup that may insert. */
static int table_reserve(lagscope__report_table *t) {
  if ((t->used + 1) * 2 <= t->mask + 1) return 0;
  uint32_t capacity = (t->mask + 1) * 2;
  if (capacity == 0 || capacity > (1u << 30)) return LAGSCOPE_ENOMEM;
  slot *slots = lagscope__alloc(sizeof(slot) * capacity);
  if (slots == NULL) return LAGSCOPE_ENOMEM;
  for (uint32_t i = 0; i <= t->mask; i++) {
    slot s = t->slots[i];
    if (s.index == 0) continue;
    uint32_t j = s.hash & (capacity - 1);
    while (slots[j].index != 0) j = (j + 1) & (capacity - 1);
    slots[j] = s;
  }
  lagscope__dealloc(t->slots);
  t->slots = slots;
  t->mask = capacity - 1;
  return 0;
}

static void *vec_push(lagscope__report_vec *v) {
  if (v->len == UINT32_MAX ||
      lagscope__grow(&v->items, &v->capacity, v->len, v->item_size, 256) != LAGSCOPE_OK)
    return NULL;
  return (char *)v->items + v->item_size * v->len++;
}

/* ---- 3. the frame cache --------------------------------------------------------------------- */

/* One resolved frame. A return address is looked up at address - 1, so the same address as
 * a PC and as a return address are two entries. */
typedef struct cache_entry {
  uintptr_t address;
  int is_return;
  uint32_t ident; /* the identity the call tree merges on */
  lagscope__stack_frame info;
} cache_entry;

/* What makes two frames the same node under one parent: the module and the function, or the
 * module and the address when the function is unknown; for a caller's frame (a return
 * address) with a known line, also that line, so that a node's file:line is the call site of
 * every sample through it, not of the first one seen. */
typedef struct ident_entry {
  const char *module;
  const char *function;
  uintptr_t address; /* 0 when function is known */
  const char *file;  /* a caller's call site; NULL for the innermost frame or without lines */
  uint32_t line;
} ident_entry;

static int ident_of(lagscope__report_ctx *c, const lagscope__stack_frame *info, int is_return,
                    uint32_t *out) {
  int call_site = is_return && info->function != NULL && info->line != 0;
  ident_entry key = {info->module, info->function, info->function != NULL ? 0 : info->address,
                     call_site ? info->file : NULL, call_site ? info->line : 0};
  uint64_t h = hash_string(hash_string(mix64(key.address), key.module), key.function);
  uint32_t hash = (uint32_t)hash_string(mix64(h ^ key.line), key.file);
  if (table_reserve(&c->ident_index) != 0) return LAGSCOPE_ENOMEM;
  uint32_t i = hash & c->ident_index.mask;
  for (;; i = (i + 1) & c->ident_index.mask) {
    slot *s = &c->ident_index.slots[i];
    if (s->index == 0) break;
    if (s->hash != hash) continue;
    const ident_entry *e = (const ident_entry *)c->idents.items + (s->index - 1);
    if (e->address == key.address && e->line == key.line && same_string(e->module, key.module) &&
        same_string(e->function, key.function) && same_string(e->file, key.file)) {
      *out = s->index - 1;
      return 0;
    }
  }
  ident_entry *e = vec_push(&c->idents);
  if (e == NULL) return LAGSCOPE_ENOMEM;
  *e = key;
  c->ident_index.slots[i] = (slot){hash, c->idents.len};
  c->ident_index.used++;
  *out = c->idents.len - 1;
  return 0;
}

int lagscope__report_ctx_resolve(lagscope__report_ctx *c, uintptr_t address, int is_return,
                                 uint32_t *out) {
  uint32_t hash = (uint32_t)mix64((uint64_t)address * 2 + (is_return ? 1 : 0));
  if (table_reserve(&c->entry_index) != 0) return LAGSCOPE_ENOMEM;
  uint32_t i = hash & c->entry_index.mask;
  for (;; i = (i + 1) & c->entry_index.mask) {
    slot *s = &c->entry_index.slots[i];
    if (s->index == 0) break;
    if (s->hash != hash) continue;
    const cache_entry *e = (const cache_entry *)c->entries.items + (s->index - 1);
    if (e->address == address && e->is_return == is_return) {
      *out = s->index - 1;
      return 0;
    }
  }
  cache_entry *e = vec_push(&c->entries);
  if (e == NULL) return LAGSCOPE_ENOMEM;
  memset(e, 0, sizeof(*e));
  e->address = address;
  e->is_return = is_return;
  lagscope__stack_frame info = {.address = address};
  if (c->resolve != NULL && c->resolve(c->resolve_ctx, address, is_return, &info) != 0) {
    /* In no known object: keep what the resolver said, but nothing it did not know. */
    info.module = NULL;
  }
  info.address = address;
  if (info.function == NULL) info.function_offset = 0;
  if (info.module == NULL) info.build_id = NULL, info.load_address = 0, info.module_offset = 0;
  e->info = info;
  uint32_t index = c->entries.len - 1;
  c->entry_index.slots[i] = (slot){hash, index + 1};
  c->entry_index.used++;
  uint32_t ident;
  if (ident_of(c, &info, is_return, &ident) != 0) return LAGSCOPE_ENOMEM;
  ((cache_entry *)c->entries.items)[index].ident = ident;
  *out = index;
  return 0;
}

static const cache_entry *entry_at(const lagscope__report_ctx *c, uint32_t index) {
  return (const cache_entry *)c->entries.items + index;
}

const lagscope__stack_frame *lagscope__report_ctx_entry(const lagscope__report_ctx *c,
                                                        uint32_t index) {
  return &entry_at(c, index)->info;
}

int lagscope__report_ctx_init(lagscope__report_ctx *c, lagscope__resolve_fn resolve, void *ctx) {
  *c = (lagscope__report_ctx){.resolve = resolve, .resolve_ctx = ctx};
  c->entries.item_size = sizeof(cache_entry);
  c->idents.item_size = sizeof(ident_entry);
  int rc = table_init(&c->entry_index, 1024);
  if (rc == 0) rc = table_init(&c->ident_index, 1024);
  return rc;
}

void lagscope__report_ctx_free(lagscope__report_ctx *c) {
  table_free(&c->entry_index);
  table_free(&c->ident_index);
  lagscope__dealloc(c->entries.items);
  lagscope__dealloc(c->idents.items);
}

const char *lagscope__report_run_state(lagscope__report_ctx *c, const lagscope__stack *stack,
                                       char *buf, size_t size) {
  switch ((lagscope__run_state)stack->run_state) {
    case LAGSCOPE__RUN_CPU: return "cpu";
    case LAGSCOPE__RUN_BLOCKED: return "blocked";
    case LAGSCOPE__RUN_SYSCALL: {
      const char *name = lagscope__syscall_name(stack->syscall);
      if (name != NULL) return name;
      if (stack->syscall >= 0) {
        snprintf(buf, size, "syscall_%d", (int)stack->syscall);
        return buf;
      }
      uint32_t frame;
      if (stack->depth > 0 && lagscope__report_ctx_resolve(c, stack->frames[0], 0, &frame) == 0 &&
          entry_at(c, frame)->info.function != NULL) {
        snprintf(buf, size, "%s", entry_at(c, frame)->info.function);
        return buf;
      }
      return "syscall";
    }
    case LAGSCOPE__RUN_UNKNOWN: break;
  }
  return "unknown";
}

/* ---- 4. the call tree ----------------------------------------------------------------------- */

#define NONE LAGSCOPE__TREE_NONE

static uint32_t child_hash(uint32_t parent, uint32_t ident) {
  return (uint32_t)mix64(((uint64_t)parent << 32) | ident);
}

/* The child of parent with identity ident, created with frame as its representative; NONE
 * when the tree is full. */
static int child_of(lagscope__call_tree *t, uint32_t parent, uint32_t ident, uint32_t frame,
                    uint32_t *out) {
  uint32_t hash = child_hash(parent, ident);
  uint32_t i = hash & t->children.mask;
  for (;; i = (i + 1) & t->children.mask) {
    slot *s = &t->children.slots[i];
    if (s->index == 0) break;
    if (s->hash != hash) continue;
    const lagscope__tree_node *n = &t->nodes[s->index - 1];
    if (n->parent == parent && n->ident == ident) {
      *out = s->index - 1;
      return 0;
    }
  }
  if (t->len == t->capacity) {
    *out = NONE;
    return 0;
  }
  uint32_t index = t->len++;
  lagscope__tree_node *n = &t->nodes[index];
  *n = (lagscope__tree_node){ident, frame, parent, 0, 0, NONE, NONE, 0};
  /* Appended at the head; the order is settled by sorting when written. */
  n->next_sibling = t->nodes[parent].first_child;
  t->nodes[parent].first_child = index;
  t->nodes[parent].child_count++;
  t->children.slots[i] = (slot){hash, index + 1};
  t->children.used++;
  *out = index;
  return 0;
}

int lagscope__call_tree_build(lagscope__call_tree *t, lagscope__report_ctx *c,
                              const lagscope__report_data *r) {
  uint64_t frames_total = 0;
  for (uint32_t s = 0; s < r->sample_count; s++)
    frames_total += lagscope__stack_depth(&r->samples[s]);
  t->capacity = frames_total + 1 < REPORT_MAX_NODES ? (uint32_t)frames_total + 1 : REPORT_MAX_NODES;
  t->nodes = lagscope__alloc(sizeof(lagscope__tree_node) * t->capacity);
  t->written_id = lagscope__alloc(sizeof(uint32_t) * t->capacity);
  t->sample_end = lagscope__alloc(sizeof(uint32_t) * (r->sample_count + 1));
  if (t->nodes == NULL || t->written_id == NULL || t->sample_end == NULL) return LAGSCOPE_ENOMEM;
  /* At most half full: the table never grows. */
  if (table_init(&t->children, t->capacity * 2) != 0) return LAGSCOPE_ENOMEM;
  t->nodes[0] = (lagscope__tree_node){NONE, NONE, NONE, r->sample_count, 0, NONE, NONE, 0};
  t->len = 1;
  for (uint32_t s = 0; s < r->sample_count; s++) {
    const lagscope__stack *stack = &r->samples[s];
    uint32_t depth = lagscope__stack_depth(stack);
    t->sample_end[s] = 0;
    if (depth == 0) {
      t->nodes[0].self++; /* nothing captured: the sample ends at the root */
      continue;
    }
    uint32_t at = 0;
    for (uint32_t k = depth; k-- > 0;) { /* outermost (depth - 1) down to the PC (0) */
      uint32_t frame;
      if (lagscope__report_ctx_resolve(c, stack->frames[k], k > 0, &frame) != 0)
        return LAGSCOPE_ENOMEM;
      uint32_t next;
      child_of(t, at, entry_at(c, frame)->ident, frame, &next);
      if (next == NONE) {
        t->truncated_samples++;
        break;
      }
      at = next;
      t->nodes[at].count++;
      t->sample_end[s] = at;
      if (k == 0) t->nodes[at].self++;
    }
  }
  return 0;
}

void lagscope__call_tree_free(lagscope__call_tree *t) {
  lagscope__dealloc(t->nodes);
  lagscope__dealloc(t->written_id);
  lagscope__dealloc(t->sample_end);
  table_free(&t->children);
}

typedef struct ranked {
  uint32_t count, index;
} ranked;

static int by_count(const void *a, const void *b) { /* heaviest first; ties: first seen */
  const ranked *x = a, *y = b;
  if (x->count != y->count) return x->count > y->count ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* Relinks every node's children below index heaviest first and numbers the nodes in the order
 * they are written (depth first; the timeline names nodes by these numbers). scratch is a
 * stack of ranked entries with room for every node (each node is in at most one live level). */
static void tree_order(lagscope__call_tree *t, uint32_t index, ranked *scratch, uint32_t top) {
  lagscope__tree_node *n = &t->nodes[index];
  t->written_id[index] = t->next_id++;
  if (n->child_count == 0) return;
  ranked *level = scratch + top;
  uint32_t k = 0;
  for (uint32_t ch = n->first_child; ch != NONE; ch = t->nodes[ch].next_sibling)
    level[k++] = (ranked){t->nodes[ch].count, ch};
  lagscope__sort(level, k, sizeof(ranked), by_count);
  n->first_child = level[0].index;
  for (uint32_t i = 0; i < k; i++)
    t->nodes[level[i].index].next_sibling = i + 1 < k ? level[i + 1].index : NONE;
  for (uint32_t i = 0; i < k; i++) tree_order(t, level[i].index, scratch, top + k);
}

int lagscope__call_tree_order(lagscope__call_tree *t) {
  ranked *scratch = lagscope__alloc(sizeof(ranked) * t->len);
  if (scratch == NULL) return LAGSCOPE_ENOMEM;
  t->next_id = 0;
  tree_order(t, 0, scratch, 0);
  lagscope__dealloc(scratch);
  return 0;
}

uint32_t lagscope__call_tree_heaviest_child(const lagscope__call_tree *t, uint32_t at) {
  uint32_t best = NONE;
  for (uint32_t ch = t->nodes[at].first_child; ch != NONE; ch = t->nodes[ch].next_sibling) {
    if (best == NONE || t->nodes[ch].count > t->nodes[best].count ||
        (t->nodes[ch].count == t->nodes[best].count && ch < best))
      best = ch;
  }
  if (best == NONE || (at != 0 && t->nodes[at].self > t->nodes[best].count)) return NONE;
  return best;
}
