/* lagscope's heap: every allocation is counted (published as monitor_memory_bytes), and
 * payloads carry a reference count in a hidden header.
 *
 * None of it comes from malloc (but under ASan, which checks only what malloc hands out).
 * glibc gives back only the free top of a thread's arena, and only above a threshold that
 * grows to the largest block the app has freed (megabytes in a GTK app): an arena stays as
 * large as its busiest moment, for the life of the app. lagscope's busy moments (a stall's
 * report, the symbol index) are short and rare, and what they used must leave the app's
 * memory with them. So blocks of half a page or more are mapped on their own and unmapped
 * when freed, and smaller ones come from runs of 16 KiB of one size each, unmapped when their
 * last block is freed.
 *
 * What is counted (lagscope__memory_in_use, published as monitor_memory_bytes) is what the heap
 * holds, not what its callers asked for: a run from the moment it is mapped until it is
 * unmapped, whole, whatever number of its blocks are out (a run holding one 64-byte block
 * counts 16 KiB), and a block of its own as its whole pages. That is the address space the
 * app lends lagscope; its resident part can be smaller, since a run's pages are touched only
 * as its blocks are first handed out. Under ASan it is what calloc was asked for, header
 * included. What callers asked for is counted apart (lagscope__memory_asked): the sum that
 * an owner's own count (lagscope__symbols_memory) must match. */
#define _DEFAULT_SOURCE /* MAP_ANON, with -std=c11 */
#include "internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static _Atomic uint64_t memory_held;  /* runs and mappings whole; calloc's blocks under ASan */
static _Atomic uint64_t memory_asked; /* the sizes callers asked for */

static void count_held(uint64_t bytes) {
  atomic_fetch_add_explicit(&memory_held, bytes, memory_order_relaxed);
}
static void uncount_held(uint64_t bytes) {
  atomic_fetch_sub_explicit(&memory_held, bytes, memory_order_relaxed);
}

/* Every allocation is cache-line aligned (the bus keeps its counters on lines of their own)
 * and is preceded by a header that says where its block is, so that dealloc knows what it
 * gives back. */
#define ALIGNMENT LAGSCOPE__CACHE_LINE

struct run;

typedef struct allocation_header {
  size_t size;         /* what the caller asked for */
  void *block;         /* what calloc, mmap or a run gave */
  size_t held;         /* the mapping's length, or what calloc was asked; 0 in a run (the run
                          is counted whole) */
  struct run *run;     /* the run the block is in; NULL when not */
} allocation_header;

#if defined(__SANITIZE_ADDRESS__)
#define OWN_MEMORY 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OWN_MEMORY 0
#endif
#endif
#ifndef OWN_MEMORY
#define OWN_MEMORY 1
#endif

/* ---- blocks of their own: half a page and more ---- */

/* size bytes and the header in a mapping of their own, zeroed; NULL when none was given. A */
static void *map_block(size_t size, size_t *mapped_bytes) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  if (size > SIZE_MAX - ALIGNMENT - page) return NULL;
  size_t bytes = (size + ALIGNMENT + page - 1) / page * page;
  void *block = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANON, -1, 0);
  if (block == MAP_FAILED) return NULL;
  *mapped_bytes = bytes;
  return block;
}

/* ---- runs: smaller blocks, 16 KiB of one size at a time ----
 * A block is a cache line for its header, then the caller's bytes; sizes 128 to 2048, in steps
 * of half a power of two, so that a block wastes a third of itself at most (the viewer keeps
 * 120 metrics ticks of ~600 bytes: 768-byte blocks, not 1024). A run's first block holds the
 * run itself. Blocks never handed out are taken in order (the run's
 * pages become resident only as they are used); freed ones go to the run's free list. One
 * lock for all: only lagscope's threads allocate, and the app's only in start and stop; no
 * system call is made under it. */

#define RUN_BYTES ((size_t)LAGSCOPE__HEAP_RUN_BYTES)
static const size_t class_bytes[] = {128, 192, 256, 384, 512, 768, 1024, 1536, 2048};
#define CLASS_COUNT ((int)(sizeof(class_bytes) / sizeof(class_bytes[0])))

typedef struct run {
  struct run *prev, *next; /* in its class's list of runs with a block to give */
  void *free;              /* a freed block, which holds the next */
  uint32_t used;           /* blocks handed out */
  uint32_t untouched;      /* the first block never handed out (blocks past it are fresh) */
  uint32_t blocks;         /* blocks after the run's own */
  uint32_t class_index;
  int listed;
} run;

static pthread_mutex_t runs_lock = PTHREAD_MUTEX_INITIALIZER;
static run *runs_with_room[CLASS_COUNT];
static pthread_once_t fork_handlers_once = PTHREAD_ONCE_INIT;

/* A fork while one of lagscope's threads holds the lock would leave it held for ever in the
 * child, whose lagscope_start would then wait: fork takes it first, as glibc's malloc does its
 * own. */
static void lock_runs(void) { pthread_mutex_lock(&runs_lock); }
static void unlock_runs(void) { pthread_mutex_unlock(&runs_lock); }
static void add_fork_handlers(void) { pthread_atfork(lock_runs, unlock_runs, unlock_runs); }

static size_t block_bytes(size_t class_index) { return class_bytes[class_index]; }

/* The class whose blocks hold size bytes after the header's line; -1 when none does. */
static int class_of(size_t size) {
  for (int c = 0; c < CLASS_COUNT; c++)
    if (size <= block_bytes((size_t)c) - ALIGNMENT) return c;
  return -1;
}

static void list_run(run *r) { /* under runs_lock */
  r->prev = NULL;
  r->next = runs_with_room[r->class_index];
  if (r->next != NULL) r->next->prev = r;
  runs_with_room[r->class_index] = r;
  r->listed = 1;
}

static void unlist_run(run *r) { /* under runs_lock */
  if (r->prev != NULL) r->prev->next = r->next;
  else runs_with_room[r->class_index] = r->next;
  if (r->next != NULL) r->next->prev = r->prev;
  r->listed = 0;
}

/* A block of the class from a listed run, or NULL when no run has room. *fresh: it was never
 * used (zero). Under runs_lock. */
static char *take_block(int class_index, run **from, int *fresh) {
  run *r = runs_with_room[class_index];
  if (r == NULL) return NULL;
  char *block;
  if (r->free != NULL) {
    block = r->free;
    memcpy(&r->free, block, sizeof(void *));
    *fresh = 0;
  } else {
    block = (char *)r + block_bytes(r->class_index) * (r->untouched++);
    *fresh = 1;
  }
  r->used++;
  if (r->free == NULL && r->untouched > r->blocks) unlist_run(r);
  *from = r;
  return block;
}

/* A zeroed block for size bytes and its header, from a run; NULL when out of memory. A, L */
static char *run_block(size_t size, run **from) {
  int class_index = class_of(size), fresh = 0;
  pthread_once(&fork_handlers_once, add_fork_handlers);
  pthread_mutex_lock(&runs_lock);
  char *block = take_block(class_index, from, &fresh);
  pthread_mutex_unlock(&runs_lock);
  if (block == NULL) {
    run *r = mmap(NULL, RUN_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANON, -1, 0);
    if (r == MAP_FAILED) return NULL;
    count_held(RUN_BYTES);
    r->class_index = (uint32_t)class_index;
    r->blocks = (uint32_t)(RUN_BYTES / block_bytes((size_t)class_index)) - 1;
    r->untouched = 1;
    pthread_mutex_lock(&runs_lock);
    list_run(r);
    block = take_block(class_index, from, &fresh);
    pthread_mutex_unlock(&runs_lock);
  }
  if (!fresh) memset(block, 0, block_bytes((*from)->class_index));
  return block;
}

/* Gives a run's block back; the run goes when it was its last. A, L */
static void free_run_block(run *r, void *block) {
  pthread_mutex_lock(&runs_lock);
  memcpy(block, &r->free, sizeof(void *));
  r->free = block;
  int empty = --r->used == 0;
  if (empty && r->listed) unlist_run(r);
  else if (!empty && !r->listed) list_run(r);
  pthread_mutex_unlock(&runs_lock);
  if (empty) {
    munmap(r, RUN_BYTES);
    uncount_held(RUN_BYTES);
  }
}

/* ---- the heap ---- */

void *lagscope__alloc(size_t size) {
  size_t extra = sizeof(allocation_header) + ALIGNMENT - 1, held = 0;
  if (size > SIZE_MAX - extra) return NULL;
  run *from = NULL;
  char *block;
  if (!OWN_MEMORY) {
    held = size + extra;
    block = calloc(1, held);
  } else if (class_of(size) >= 0) {
    block = run_block(size, &from);
  } else {
    block = map_block(size, &held);
  }
  if (block == NULL) return NULL;
  uintptr_t start = ((uintptr_t)block + sizeof(allocation_header) + ALIGNMENT - 1) &
                    ~(uintptr_t)(ALIGNMENT - 1);
  allocation_header *header = (allocation_header *)start - 1;
  header->size = size;
  header->block = block;
  header->held = held;
  header->run = from;
  count_held(held);
  atomic_fetch_add_explicit(&memory_asked, size, memory_order_relaxed);
  return (void *)start;
}

void lagscope__dealloc(void *p) {
  if (p == NULL) return;
  allocation_header *header = (allocation_header *)p - 1;
  atomic_fetch_sub_explicit(&memory_asked, header->size, memory_order_relaxed);
  size_t held = header->held;
  if (header->run != NULL)
    free_run_block(header->run, header->block);
  else if (OWN_MEMORY)
    munmap(header->block, held);
  else
    free(header->block);
  uncount_held(held);
}

uint64_t lagscope__memory_in_use(void) {
  return atomic_load_explicit(&memory_held, memory_order_relaxed);
}

uint64_t lagscope__memory_asked(void) {
  return atomic_load_explicit(&memory_asked, memory_order_relaxed);
}

size_t lagscope__memory_block_bytes(size_t size) {
  size_t extra = sizeof(allocation_header) + ALIGNMENT - 1;
  if (size > SIZE_MAX - extra) return 0;
  if (!OWN_MEMORY) return size + extra;
  int class_index = class_of(size);
  if (class_index >= 0) return block_bytes((size_t)class_index);
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  return size > SIZE_MAX - ALIGNMENT - page ? 0 : (size + ALIGNMENT + page - 1) / page * page;
}

int lagscope__grow_upto(void **items, size_t *capacity, size_t len, size_t item_size,
                        size_t first, size_t most) {
  if (len < *capacity) return LAGSCOPE_OK;
  size_t grown = *capacity != 0 ? *capacity * 2 : first;
  if (grown > most) grown = most;
  if (grown <= len || grown > SIZE_MAX / item_size) return LAGSCOPE_ENOMEM;
  void *bigger = lagscope__alloc(grown * item_size);
  if (bigger == NULL) return LAGSCOPE_ENOMEM;
  if (*items != NULL) memcpy(bigger, *items, len * item_size);
  lagscope__dealloc(*items);
  *items = bigger;
  *capacity = grown;
  return LAGSCOPE_OK;
}

int lagscope__grow(void **items, size_t *capacity, size_t len, size_t item_size, size_t first) {
  return lagscope__grow_upto(items, capacity, len, item_size, first, SIZE_MAX);
}

/* ---- text arenas ---- */

#define TEXT_CHUNK_BYTES 16384

struct lagscope__text_chunk {
  struct lagscope__text_chunk *next;
  size_t used, cap;
  char data[];
};

const char *lagscope__text_arena_copy(lagscope__text_arena *a, const char *text) {
  size_t len = strlen(text) + 1;
  struct lagscope__text_chunk *c = a->chunks;
  if (c == NULL || c->cap - c->used < len) {
    size_t cap = len > TEXT_CHUNK_BYTES ? len : TEXT_CHUNK_BYTES;
    c = lagscope__alloc(sizeof(*c) + cap);
    if (c == NULL) return NULL;
    c->cap = cap;
    c->next = a->chunks;
    a->chunks = c;
    a->bytes += sizeof(*c) + cap;
  }
  char *copy = c->data + c->used;
  memcpy(copy, text, len);
  c->used += len;
  return copy;
}

void lagscope__text_arena_free(lagscope__text_arena *a) {
  while (a->chunks != NULL) {
    struct lagscope__text_chunk *c = a->chunks;
    a->chunks = c->next;
    lagscope__dealloc(c);
  }
  a->bytes = 0;
}

void lagscope_free(void *p) { free(p); }

/* ---- payloads ---- */

/* A whole cache line, so a payload is as aligned as any allocation. */
typedef struct payload_header {
  _Alignas(LAGSCOPE__CACHE_LINE) _Atomic uint32_t refs;
  lagscope__payload_destroy_fn destroy;
} payload_header;

static payload_header *header_of(const void *payload) {
  return (payload_header *)((char *)(uintptr_t)payload - sizeof(payload_header));
}

void *lagscope__payload_new(size_t size, lagscope__payload_destroy_fn destroy) {
  payload_header *h = lagscope__alloc(sizeof(payload_header) + size);
  if (h == NULL) return NULL;
  atomic_init(&h->refs, 1);
  h->destroy = destroy;
  return (char *)h + sizeof(payload_header);
}

char *lagscope__strdup(const char *text) {
  size_t size = strlen(text) + 1;
  char *copy = lagscope__alloc(size);
  if (copy != NULL) memcpy(copy, text, size);
  return copy;
}

void *lagscope__alloc_array(size_t count, size_t size) {
  return size != 0 && count > SIZE_MAX / size ? NULL : lagscope__alloc(count * size);
}

char *lagscope__payload_text(const char *text) {
  size_t size = strlen(text) + 1;
  char *copy = lagscope__payload_new(size, NULL);
  if (copy != NULL) memcpy(copy, text, size);
  return copy;
}

uint32_t lagscope__payload_refs(const void *payload) {
  return atomic_load_explicit(&header_of(payload)->refs, memory_order_acquire);
}

void lagscope_retain(const void *payload) {
  if (payload == NULL) return;
  atomic_fetch_add_explicit(&header_of(payload)->refs, 1, memory_order_relaxed);
}

void lagscope_release(const void *payload) {
  if (payload == NULL) return;
  payload_header *h = header_of(payload);
  /* acq_rel: the last owner must see every write made before other owners released. */
  if (atomic_fetch_sub_explicit(&h->refs, 1, memory_order_acq_rel) != 1) return;
  if (h->destroy != NULL) h->destroy((char *)h + sizeof(payload_header));
  lagscope__dealloc(h);
}
