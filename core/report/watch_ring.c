/*
 * The watch ring: what the watch thread (core/monitor.c) hands the recorder thread
 * (core/recorder.c), in order: the main thread's samples, a hang's start and end, hitches,
 * metrics ticks. Bounded and preallocated, one producer and one consumer, no lock: the watch
 * thread never waits for the recorder. A full ring thins the samples (each one due is taken
 * at a wider stride as the ring fills, none in its last RESERVE slots, kept for the other
 * items), and the items carry how many were left out, so that a report says so.
 */
#include "internal.h"

#include <string.h>

#define RESERVE 8 /* slots left to items other than samples */

int lagscope__watch_ring_init(lagscope__watch_ring *r, uint32_t capacity) {
  memset(r, 0, sizeof(*r));
  r->items = lagscope__alloc(sizeof(*r->items) * capacity);
  if (r->items == NULL) return LAGSCOPE_ENOMEM;
  r->capacity = capacity;
  return LAGSCOPE_OK;
}

void lagscope__watch_ring_free(lagscope__watch_ring *r) {
  lagscope__dealloc(r->items);
  r->items = NULL;
}

static uint32_t used(const lagscope__watch_ring *r) {
  return (uint32_t)(atomic_load_explicit(&r->head, memory_order_relaxed) -
                    atomic_load_explicit(&r->tail, memory_order_acquire));
}

/* Every sample while the ring is less than half full; then every 2nd, every 4th past three
 * quarters, none in the last RESERVE slots. F */
static uint32_t stride(const lagscope__watch_ring *r) {
  uint32_t n = used(r), cap = r->capacity;
  if (n + RESERVE >= cap) return 0;
  return n < cap / 2 ? 1 : n < cap / 4 * 3 ? 2 : 4;
}

int lagscope__watch_ring_wants_sample(lagscope__watch_ring *r) {
  uint32_t every = stride(r);
  int take = every != 0 && r->turn % every == 0;
  r->turn++;
  if (!take) r->thinned++;
  return take;
}

lagscope__watch_item *lagscope__watch_ring_reserve(lagscope__watch_ring *r, int kind) {
  if (used(r) == r->capacity) {
    r->lost++;
    return NULL;
  }
  uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
  lagscope__watch_item *item = &r->items[head % r->capacity];
  item->kind = kind;
  item->thinned = r->thinned;
  item->lost = r->lost;
  r->thinned = r->lost = 0;
  return item;
}

void lagscope__watch_ring_commit(lagscope__watch_ring *r) {
  atomic_fetch_add_explicit(&r->head, 1, memory_order_release);
}

lagscope__watch_item *lagscope__watch_ring_peek(lagscope__watch_ring *r) {
  uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
  if (tail == atomic_load_explicit(&r->head, memory_order_acquire)) return NULL;
  return &r->items[tail % r->capacity];
}

void lagscope__watch_ring_pop(lagscope__watch_ring *r) {
  atomic_fetch_add_explicit(&r->tail, 1, memory_order_release);
}
