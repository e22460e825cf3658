/* lagscope's heap: every allocation is counted (published as monitor_memory_bytes), and
 * payloads carry a reference count in a hidden header. */
#include "internal.h"

#include <stdlib.h>

/* Stored before every allocation so that dealloc knows the size it gives back. */
typedef struct allocation_header {
  size_t size;
  max_align_t align_;
} allocation_header;

static _Atomic uint64_t memory_in_use;

void *lagscope__alloc(size_t size) {
  allocation_header *h = calloc(1, sizeof(allocation_header) + size);
  if (h == NULL) return NULL;
  h->size = size;
  atomic_fetch_add_explicit(&memory_in_use, size, memory_order_relaxed);
  return (char *)h + sizeof(allocation_header);
}

void lagscope__dealloc(void *p) {
  if (p == NULL) return;
  allocation_header *h = (allocation_header *)((char *)p - sizeof(allocation_header));
  atomic_fetch_sub_explicit(&memory_in_use, h->size, memory_order_relaxed);
  free(h);
}

uint64_t lagscope__memory_in_use(void) {
  return atomic_load_explicit(&memory_in_use, memory_order_relaxed);
}

void lagscope_free(void *p) { free(p); }

/* ---- payloads ---- */

typedef struct payload_header {
  _Atomic uint32_t refs;
  lagscope__payload_destroy_fn destroy;
  max_align_t align_;
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
