/*
 * The main thread's calls: lagscope_frame, lagscope_heartbeat, the idle marks and the ping's
 * answer. Each is a clock read and a few atomic stores: no lock, no allocation, no system call
 * other than the vDSO clock. What they write is static, never freed: the main thread may run
 * a ping that a host queue held past lagscope_stop, and calls lagscope_frame whether or not
 * lagscope runs. The monitor thread reads it (core/monitor.c).
 */
#include "internal.h"

static lagscope__main_signals main_signals;
static lagscope__frame_ring frame_ring;

/* The thread whose calls prove the main thread alive: the one that started lagscope. A call
 * from another thread (a render thread's frame, a hook that runs the ping where it was posted,
 * as GLib's g_main_context_invoke does when the loop is not running) says nothing about it:
 * it is ignored, and the monitor reports the thread once. Each thread's id is read once and
 * kept, so that these calls stay free of system calls. */
static _Atomic int32_t watched_thread; /* 0 before the first start */
static _Atomic int32_t wrong_thread;   /* the last other thread that called; 0 once reported */
static _Thread_local int32_t own_thread;

lagscope__main_signals *lagscope__main_signals_shared(void) { return &main_signals; }
lagscope__frame_ring *lagscope__frame_ring_shared(void) { return &frame_ring; }

void lagscope__main_thread_watch(int32_t thread_id) {
  atomic_store(&watched_thread, thread_id);
  atomic_store(&wrong_thread, 0);
}

int32_t lagscope__main_thread_watched(void) {
  int32_t watched = atomic_load(&watched_thread);
  return watched != 0 ? watched : lagscope__main_thread_id(); /* a recorder used alone (tests) */
}

int32_t lagscope__main_thread_take_wrong_caller(void) {
  return atomic_exchange_explicit(&wrong_thread, 0, memory_order_relaxed);
}

static int on_watched_thread(void) {
  if (own_thread == 0) own_thread = lagscope__thread_id();
  int32_t watched = atomic_load_explicit(&watched_thread, memory_order_relaxed);
  if (watched == 0 || own_thread == watched) return 1;
  atomic_store_explicit(&wrong_thread, own_thread, memory_order_relaxed);
  return 0;
}

/* A sign of life at now: the first after a gap also says where that stall ended. Only the
 * main thread writes these. */
static void note_alive(uint64_t now) {
  uint64_t before = atomic_load_explicit(&main_signals.alive_ns, memory_order_relaxed);
  uint64_t gap = atomic_load_explicit(&main_signals.gap_ns, memory_order_relaxed);
  if (gap != 0 && now > before && now - before >= gap) { /* where it began, then ended */
    atomic_store_explicit(&main_signals.resumed_from_ns, before, memory_order_relaxed);
    atomic_store_explicit(&main_signals.resumed_ns, now, memory_order_release);
  }
  atomic_store_explicit(&main_signals.alive_ns, now, memory_order_release);
}

/* A frame or a heartbeat: life the app shows unasked, which spares the watchdog its pings. */
static void note_beat(uint64_t now) {
  note_alive(now);
  atomic_store_explicit(&main_signals.beat_ns, now, memory_order_release);
}

/* The last frame's timestamp: the ring holds them in order. Written by the watched thread. */
static uint64_t last_frame_ns;

/* A frame at timestamp_ns, or at the last one's if that is later: the ring stays in order. F */
static void push_frame(uint64_t timestamp_ns) {
  if (timestamp_ns > last_frame_ns) last_frame_ns = timestamp_ns;
  lagscope__frame_ring_push(&frame_ring, last_frame_ns);
}

void lagscope_frame(void) {
  if (!on_watched_thread()) return;
  uint64_t now = lagscope__now_ns();
  push_frame(now);
  note_beat(now);
}

void lagscope__main_thread_frame_at(uint64_t timestamp_ns) {
  if (on_watched_thread()) push_frame(timestamp_ns);
}

void lagscope_heartbeat(void) {
  if (!on_watched_thread()) return;
  note_beat(lagscope__now_ns());
}

/* Idle: alive at begin (which ends a hang), owing nothing until end, alive again at end so
 * that the threshold counts from there. The idle spell is no gap: the watchdog would take a
 * gap it did not see for a stall. */
static void set_idle(int idle) {
  if (!on_watched_thread()) return;
  uint64_t now = lagscope__now_ns();
  if (idle)
    note_alive(now);
  else
    atomic_store_explicit(&main_signals.alive_ns, now, memory_order_release);
  atomic_store_explicit(&main_signals.idle, idle, memory_order_release);
}

void lagscope_idle_begin(void) { set_idle(1); }
void lagscope_idle_end(void) { set_idle(0); }

void lagscope__main_thread_answer_ping(void *arg) {
  uint64_t seq = (uint64_t)(uintptr_t)arg;
  if (!on_watched_thread()) return; /* not an answer: the watchdog posts again once it is lost */
  uint64_t now = lagscope__now_ns();
  /* The time first, then the number: a monitor that sees the number sees its time. */
  atomic_store_explicit(&main_signals.answered_ns, now, memory_order_release);
  if (seq > atomic_load_explicit(&main_signals.answered_seq, memory_order_relaxed))
    atomic_store_explicit(&main_signals.answered_seq, seq, memory_order_release);
  note_alive(now);
}
