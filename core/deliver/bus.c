/* The bus: a bounded queue of events from many threads to one consumer, in lanes.
 *
 * One ring shared by every publisher collapses under contention: each publish moves the ring's
 * head line between cores (bench_bus: 17 M events/s with one publisher, 3 M/s with four). So
 * each publishing thread has a lane of its own, picked by a ticket it takes at its first
 * publish; a lane is a ring of sequenced slots (Vyukov's bounded queue), so threads that share
 * one (more threads than lanes) stay correct, only slower. A publisher reserves a position with
 * one CAS on its lane's head, fills the slot and commits it by storing the slot's sequence; a
 * full lane refuses at once, and the refusal is counted. The consumer takes a burst from one
 * lane, then moves on, so a busy thread cannot starve the others. Publishers wake the consumer
 * only when it said it was about to sleep, so a busy bus costs no system call. */
#include "internal.h"

#include <string.h>

#define BURST 32 /* events the consumer takes from one lane before it looks at the next */

/* The calling thread's ticket, 1-based once taken (lagscope's threads and the app's alike). */
static _Atomic uint32_t tickets_taken;
static _Thread_local uint32_t thread_ticket;

static int bus_init(lagscope__bus *bus, uint32_t capacity, uint32_t lane_count, int stamps) {
  if (capacity < 2 || (capacity & (capacity - 1)) != 0) return LAGSCOPE_EINVAL;
  lagscope__bus_slot *slots = lagscope__alloc(sizeof(*slots) * capacity * lane_count);
  lagscope__bus_lane *lanes = lagscope__alloc(sizeof(*lanes) * lane_count);
  lagscope__wakeup *wakeup = lagscope__wakeup_new();
  if (slots == NULL || lanes == NULL || wakeup == NULL) {
    lagscope__dealloc(slots);
    lagscope__dealloc(lanes);
    lagscope__wakeup_free(wakeup);
    return LAGSCOPE_ENOMEM;
  }
  memset(bus, 0, sizeof(*bus));
  /* The slots come zeroed ("free for the first lap"), and are left untouched: a lane no thread
   * publishes into costs address space, not memory. */
  bus->slots = slots;
  bus->lanes = lanes;
  bus->wakeup = wakeup;
  bus->mask = capacity - 1;
  bus->lane_count = lane_count;
  bus->stamps = stamps;
  return LAGSCOPE_OK;
}

int lagscope__bus_init(lagscope__bus *bus, uint32_t capacity) {
  return bus_init(bus, capacity, LAGSCOPE__BUS_LANES, 1);
}

int lagscope__bus_init_queue(lagscope__bus *bus, uint32_t capacity) {
  return bus_init(bus, capacity, 1, 0);
}

void lagscope__bus_destroy(lagscope__bus *bus) {
  lagscope_event e;
  if (bus->slots == NULL) return;
  while (lagscope__bus_take(bus, &e)) lagscope_release(e.payload.any);
  lagscope__dealloc(bus->slots);
  lagscope__dealloc(bus->lanes);
  lagscope__wakeup_free(bus->wakeup);
  bus->slots = NULL;
  bus->lanes = NULL;
  bus->wakeup = NULL;
}

/* The calling thread's lane. F (the first call on a thread takes a ticket: one atomic add). */
static uint32_t own_lane(const lagscope__bus *bus) {
  if (bus->lane_count == 1) return 0;
  if (thread_ticket == 0)
    thread_ticket = atomic_fetch_add_explicit(&tickets_taken, 1, memory_order_relaxed) + 1;
  return (thread_ticket - 1) % bus->lane_count;
}

static lagscope__bus_slot *slot_at(const lagscope__bus *bus, uint32_t lane, uint64_t pos) {
  return &bus->slots[(uint64_t)lane * (bus->mask + 1) + (pos & bus->mask)];
}

int lagscope__bus_publish(lagscope__bus *bus, const lagscope_event *event) {
  uint32_t lane_index = own_lane(bus);
  lagscope__bus_lane *lane = &bus->lanes[lane_index];
  uint64_t pos = atomic_load_explicit(&lane->head, memory_order_relaxed);
  lagscope__bus_slot *slot;
  for (;;) {
    slot = slot_at(bus, lane_index, pos);
    uint64_t seq = atomic_load_explicit(&slot->sequence, memory_order_acquire);
    int64_t diff = (int64_t)(seq - (pos & ~bus->mask));
    if (diff == 0) {
      if (atomic_compare_exchange_weak_explicit(&lane->head, &pos, pos + 1,
                                                memory_order_relaxed, memory_order_relaxed))
        break;
    } else if (diff < 0) { /* the slot still holds an event from one lap ago: full */
      atomic_fetch_add_explicit(&lane->dropped, 1, memory_order_relaxed);
      lagscope_release(event->payload.any);
      return LAGSCOPE_EFULL;
    } else { /* a thread sharing the lane took this position first */
      pos = atomic_load_explicit(&lane->head, memory_order_relaxed);
    }
  }
  slot->event = *event;
  atomic_store_explicit(&slot->sequence, (pos & ~bus->mask) + 1, memory_order_release);
  /* A store then a load, as the consumer's in lagscope__bus_wait: without a full fence on both
   * sides the load may pass the store (x86's store buffer), each side misses the other's store,
   * and the event waits for the consumer's timed wait (test_bus's wake_never_missed). */
  atomic_thread_fence(memory_order_seq_cst);
  if (atomic_load_explicit(&bus->consumer_sleeping, memory_order_relaxed) &&
      atomic_exchange_explicit(&bus->consumer_sleeping, 0, memory_order_seq_cst))
    lagscope__wakeup_post(bus->wakeup);
  return LAGSCOPE_OK;
}

/* The slot at the lane's tail when it holds a committed event, else NULL. F */
static lagscope__bus_slot *ready_slot(const lagscope__bus *bus, uint32_t lane) {
  uint64_t pos = bus->lanes[lane].tail;
  lagscope__bus_slot *slot = slot_at(bus, lane, pos);
  uint64_t seq = atomic_load_explicit(&slot->sequence, memory_order_acquire);
  return seq == (pos & ~bus->mask) + 1 ? slot : NULL;
}

/* Takes the event at the lane's tail (ready_slot said it is there) and frees its slot for the
 * next lap. F */
static void take_from(lagscope__bus *bus, uint32_t lane, lagscope__bus_slot *slot,
                      lagscope_event *out) {
  lagscope__bus_lane *l = &bus->lanes[lane];
  *out = slot->event;
  if (bus->stamps) out->sequence = bus->delivered;
  bus->delivered++;
  atomic_store_explicit(&slot->sequence, (l->tail & ~bus->mask) + bus->mask + 1,
                        memory_order_release);
  l->tail++;
}

int lagscope__bus_take(lagscope__bus *bus, lagscope_event *out) {
  /* The lane of the last take while its burst lasts, then each lane once, in turn. */
  for (uint32_t looked = 0; looked <= bus->lane_count; looked++) {
    if (bus->burst_now < BURST) {
      lagscope__bus_slot *slot = ready_slot(bus, bus->lane_now);
      if (slot != NULL) {
        bus->burst_now++;
        take_from(bus, bus->lane_now, slot, out);
        return 1;
      }
    }
    bus->lane_now = (bus->lane_now + 1) % bus->lane_count;
    bus->burst_now = 0;
  }
  return 0;
}

/* Whether any lane holds a committed event. F */
static int any_ready(const lagscope__bus *bus) {
  for (uint32_t lane = 0; lane < bus->lane_count; lane++)
    if (ready_slot(bus, lane) != NULL) return 1;
  return 0;
}

void lagscope__bus_wait(lagscope__bus *bus, uint64_t deadline_ns) {
  atomic_store_explicit(&bus->consumer_sleeping, 1, memory_order_relaxed);
  /* Re-check after announcing, past a full fence (the publisher's pair): a publisher that
   * committed before it saw the flag. */
  atomic_thread_fence(memory_order_seq_cst);
  if (!any_ready(bus)) lagscope__wakeup_wait_until(bus->wakeup, deadline_ns);
  atomic_store_explicit(&bus->consumer_sleeping, 0, memory_order_seq_cst);
}

uint64_t lagscope__bus_published(const lagscope__bus *bus) {
  uint64_t sum = 0;
  for (uint32_t lane = 0; lane < bus->lane_count; lane++)
    sum += atomic_load_explicit(&bus->lanes[lane].head, memory_order_relaxed);
  return sum;
}

uint64_t lagscope__bus_dropped(const lagscope__bus *bus) {
  uint64_t sum = 0;
  for (uint32_t lane = 0; lane < bus->lane_count; lane++)
    sum += atomic_load_explicit(&bus->lanes[lane].dropped, memory_order_relaxed);
  return sum;
}

void lagscope__bus_wake(lagscope__bus *bus) { lagscope__wakeup_post(bus->wakeup); }
