/* The bus: a bounded queue of events in a ring of sequenced slots (Vyukov's bounded queue).
 * A publisher reserves a position with one CAS, fills the slot and commits it by storing the
 * slot's sequence; a full ring refuses at once, and the refusal is counted. The consumer is
 * single. Publishers wake the consumer only when it said it was about to sleep, so a busy bus
 * costs no system call. */
#include "internal.h"

#include <string.h>

int lagscope__bus_init(lagscope__bus *bus, uint32_t capacity) {
  if (capacity < 2 || (capacity & (capacity - 1)) != 0) return LAGSCOPE_EINVAL;
  memset(bus, 0, sizeof(*bus));
  bus->slots = lagscope__alloc(sizeof(lagscope__bus_slot) * capacity);
  bus->wakeup = lagscope__wakeup_new();
  if (bus->slots == NULL || bus->wakeup == NULL) {
    lagscope__dealloc(bus->slots);
    lagscope__wakeup_free(bus->wakeup);
    return LAGSCOPE_ENOMEM;
  }
  bus->mask = capacity - 1;
  for (uint64_t i = 0; i < capacity; i++) atomic_init(&bus->slots[i].sequence, i);
  return LAGSCOPE_OK;
}

void lagscope__bus_destroy(lagscope__bus *bus) {
  lagscope_event e;
  if (bus->slots == NULL) return;
  while (lagscope__bus_take(bus, &e)) lagscope_release(e.payload.any);
  lagscope__dealloc(bus->slots);
  lagscope__wakeup_free(bus->wakeup);
  bus->slots = NULL;
  bus->wakeup = NULL;
}

static int push(lagscope__bus *bus, const lagscope_event *event, int stamp) {
  uint64_t pos = atomic_load_explicit(&bus->head, memory_order_relaxed);
  lagscope__bus_slot *slot;
  for (;;) {
    slot = &bus->slots[pos & bus->mask];
    uint64_t seq = atomic_load_explicit(&slot->sequence, memory_order_acquire);
    int64_t diff = (int64_t)(seq - pos);
    if (diff == 0) {
      if (atomic_compare_exchange_weak_explicit(&bus->head, &pos, pos + 1,
                                                memory_order_relaxed, memory_order_relaxed))
        break;
    } else if (diff < 0) { /* the slot still holds an event from one lap ago: full */
      atomic_fetch_add_explicit(&bus->dropped, 1, memory_order_relaxed);
      lagscope_release(event->payload.any);
      return LAGSCOPE_EFULL;
    } else {
      pos = atomic_load_explicit(&bus->head, memory_order_relaxed);
    }
  }
  slot->event = *event;
  if (stamp) slot->event.sequence = pos;
  atomic_store_explicit(&slot->sequence, pos + 1, memory_order_release);
  /* seq_cst pairs with the consumer's store of consumer_sleeping and its re-check. */
  if (atomic_load_explicit(&bus->consumer_sleeping, memory_order_seq_cst) &&
      atomic_exchange_explicit(&bus->consumer_sleeping, 0, memory_order_seq_cst))
    lagscope__wakeup_post(bus->wakeup);
  return LAGSCOPE_OK;
}

int lagscope__bus_publish(lagscope__bus *bus, const lagscope_event *event) {
  return push(bus, event, 1);
}

int lagscope__bus_forward(lagscope__bus *bus, const lagscope_event *event) {
  return push(bus, event, 0);
}

static lagscope__bus_slot *ready_slot(lagscope__bus *bus, uint64_t pos) {
  lagscope__bus_slot *slot = &bus->slots[pos & bus->mask];
  uint64_t seq = atomic_load_explicit(&slot->sequence, memory_order_acquire);
  return seq == pos + 1 ? slot : NULL;
}

int lagscope__bus_take(lagscope__bus *bus, lagscope_event *out) {
  uint64_t pos = atomic_load_explicit(&bus->tail, memory_order_relaxed);
  lagscope__bus_slot *slot = ready_slot(bus, pos);
  if (slot == NULL) return 0;
  *out = slot->event;
  atomic_store_explicit(&slot->sequence, pos + bus->mask + 1, memory_order_release);
  atomic_store_explicit(&bus->tail, pos + 1, memory_order_relaxed);
  return 1;
}

void lagscope__bus_wait(lagscope__bus *bus, uint64_t deadline_ns) {
  atomic_store_explicit(&bus->consumer_sleeping, 1, memory_order_seq_cst);
  /* Re-check after announcing: a publisher that committed before it saw the flag. */
  uint64_t pos = atomic_load_explicit(&bus->tail, memory_order_relaxed);
  if (ready_slot(bus, pos) == NULL) lagscope__wakeup_wait_until(bus->wakeup, deadline_ns);
  atomic_store_explicit(&bus->consumer_sleeping, 0, memory_order_seq_cst);
}

uint64_t lagscope__bus_published(const lagscope__bus *bus) {
  return atomic_load_explicit(&bus->head, memory_order_relaxed);
}

void lagscope__bus_wake(lagscope__bus *bus) { lagscope__wakeup_post(bus->wakeup); }
