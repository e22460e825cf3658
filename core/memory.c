/* lagscope's heap: every allocation is counted (published as monitor_memory_bytes), and
 * payloads carry a reference count in a hidden header. */
#define _DEFAULT_SOURCE /* MAP_ANON, with -std=c11 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static _Atomic uint64_t memory_in_use;

/* Every allocation is cache-line aligned (the bus keeps its counters on lines of their own)
 * and is preceded by a header that holds its size and where the block begins, so that dealloc
 * knows what it gives back. */
#define ALIGNMENT LAGSCOPE__CACHE_LINE

typedef struct allocation_header {
  size_t size;
  void *block;         /* what calloc or mmap returned */
  size_t mapped_bytes; /* the mapping's length; 0 when the block came from calloc */
} allocation_header;

/* Blocks this large are mapped on their own and unmapped when freed. glibc would map them too,
 * at first, but its threshold grows to the size of the first such block freed, and from then
 * on they come from the calling thread's arena, which keeps what is freed in its middle: the
 * symbol index's tables, let go 30 s after a stall, stayed resident. Not under ASan, which
 * checks only what malloc hands out. */
#define OWN_MAPPING_MIN ((size_t)64 * 1024)
#if defined(__SANITIZE_ADDRESS__)
#define OWN_MAPPINGS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OWN_MAPPINGS 0
#endif
#endif
#ifndef OWN_MAPPINGS
#define OWN_MAPPINGS 1
#endif

/* size bytes and the header in a mapping of their own, zeroed; NULL when none was given. */
static void *map_block(size_t size, size_t *mapped_bytes) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  if (size > SIZE_MAX - ALIGNMENT - page) return NULL;
  size_t bytes = (size + ALIGNMENT + page - 1) / page * page;
  void *block = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANON, -1, 0);
  if (block == MAP_FAILED) return NULL;
  *mapped_bytes = bytes;
  return block;
}

/* calloc, not aligned_alloc and memset: calloc knows that memory fresh from the OS is zero and
 * leaves it untouched, so a table (the bus's slots, a sample's thread list) takes resident
 * memory only as it is used. The alignment is made by hand, within the block. */
void *lagscope__alloc(size_t size) {
  size_t extra = sizeof(allocation_header) + ALIGNMENT - 1, mapped_bytes = 0;
  if (size > SIZE_MAX - extra) return NULL;
  char *block = OWN_MAPPINGS && size >= OWN_MAPPING_MIN ? map_block(size, &mapped_bytes)
                                                         : calloc(1, size + extra);
  if (block == NULL) return NULL;
  uintptr_t start = ((uintptr_t)block + sizeof(allocation_header) + ALIGNMENT - 1) &
                    ~(uintptr_t)(ALIGNMENT - 1);
  allocation_header *header = (allocation_header *)start - 1;
  header->size = size;
  header->block = block;
  header->mapped_bytes = mapped_bytes;
  atomic_fetch_add_explicit(&memory_in_use, size, memory_order_relaxed);
  return (void *)start;
}

void lagscope__dealloc(void *p) {
  if (p == NULL) return;
  allocation_header *header = (allocation_header *)p - 1;
  atomic_fetch_sub_explicit(&memory_in_use, header->size, memory_order_relaxed);
  if (header->mapped_bytes != 0)
    munmap(header->block, header->mapped_bytes);
  else
    free(header->block);
}

uint64_t lagscope__memory_in_use(void) {
  return atomic_load_explicit(&memory_in_use, memory_order_relaxed);
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
