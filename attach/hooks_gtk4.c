/* GTK 4's frames, for lagscope-run: counted from GDK's own signals, whatever the backend (X11,
 * Wayland) and the renderer (GL, Vulkan, cairo).
 *
 * GTK 3's frames are a hook on gdk_window_end_draw_frame (hooks.c). GTK 4 has no such function
 * that a preload can take: libgtk-4 is linked -Bsymbolic, so its own calls (gsk's
 * gdk_draw_context_end_frame, the frame clock's) never leave the library, and its GL renderer
 * reaches EGL through libepoxy's dlsym, which no hook sees either. What every GTK 4 frame does
 * go through is GObject's signal emission: a surface emits "render" when it draws (damage to
 * paint: the renderer presents inside it) and its frame clock "after-paint" when the frame's
 * paint phase is over. One emission hook on each signal (GObject's g_signal_add_emission_hook,
 * for every instance of the type) sees every window's frames, popovers' too, with no handler
 * connected to any object: a "render" arms, the next "after-paint" of the main thread counts one
 * frame. A frame clock cycle that drew nothing (a tick that changed nothing) is no frame, so an
 * app that presents nothing stays idle.
 *
 * Each frame is counted at its presentation time where GDK has one (Wayland's presentation
 * feedback, the compositor's clock: gdk_frame_timings_get_presentation_time). GDK knows it once
 * the frame's timings are complete, a frame or two later: at "after-paint" the frame is a sign
 * of life and waits in a short list (its frame clock held by a reference); each later
 * "after-paint" counts the waiting frames whose timings completed, at their presentation time,
 * or at the time they were drawn where GDK has none (X11 without a compositor's frame timings).
 * A frame whose timings never complete (8 frames on, or gone from the clock's history) counts
 * at its draw time: each frame is counted once. The log says once which clock it is.
 *
 * Installed once, on the main thread, when GLib's loop is first seen there (hooks.c) with
 * libgtk-4 loaded. GObject allocates the hooks there, once. The types and signals are looked up
 * by name with plain C types: nothing of GTK is loaded that the program did not load. */
#define _GNU_SOURCE
#include "preload.h"

#include "internal.h" /* lagscope__now_ns, lagscope__log */

#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define GTK4_SONAME "libgtk-4.so.1"
#define GOBJECT_SONAME "libgobject-2.0.so.0"

typedef unsigned long gtype;
typedef gtype (*get_type_fn)(void);
typedef void *(*class_ref_fn)(gtype type);
typedef unsigned (*signal_lookup_fn)(const char *name, gtype type);
typedef int (*emission_hook_fn)(void *hint, unsigned n_values, const void *values, void *data);
typedef unsigned long (*add_emission_hook_fn)(unsigned signal, unsigned detail,
                                              emission_hook_fn hook, void *data,
                                              void (*destroy)(void *data));

typedef int64_t (*clock_counter_fn)(void *clock);
typedef void *(*clock_timings_fn)(void *clock, int64_t counter);
typedef int (*timings_complete_fn)(void *timings);
typedef int64_t (*timings_presented_fn)(void *timings);
typedef void *(*object_ref_fn)(void *object);
typedef void (*object_unref_fn)(void *object);

/* GDK's and GObject's functions for frame timings: all set, or none (frames at draw time). */
static struct {
  clock_counter_fn counter;
  clock_timings_fn timings;
  timings_complete_fn complete;
  timings_presented_fn presented;
  object_ref_fn ref;
  object_unref_fn unref;
} gdk;

/* Frames drawn whose presentation time is not known yet: the main thread's, oldest first. */
#define WAITING 16
#define NEVER_COMPLETE 8 /* frames on, a frame whose timings did not complete counts as drawn */
typedef struct waiting_frame {
  void *clock; /* a reference held */
  int64_t counter;
  uint64_t drawn_ns;
} waiting_frame;
static waiting_frame waiting[WAITING];
static int waiting_len;

/* Set by "render", spent by "after-paint", on the thread that emits them (GDK's: the main
 * thread; the hooks ignore any other). */
static __thread int rendering __attribute__((tls_model("initial-exec")));
static __thread int thread_kind __attribute__((tls_model("initial-exec"))); /* 0: not known */

static int on_main_thread(void) {
  if (thread_kind == 0) thread_kind = syscall(SYS_gettid) == getpid() ? 1 : 2;
  return thread_kind == 1;
}

/* A surface is drawing its frame. G_TYPE_BOOLEAN TRUE: the hook stays. */
static int on_render(void *hint, unsigned n_values, const void *values, void *data) {
  (void)hint, (void)n_values, (void)values, (void)data;
  rendering = 1;
  return 1;
}

/* Which clock GDK's presentation times are on: the compositor's (wp_presentation's clock_id,
 * which GDK passes on as it is). Mutter's is CLOCK_MONOTONIC, lagscope's; weston's is
 * CLOCK_MONOTONIC_RAW, apart from it by NTP's slewing since boot (186 ms on one machine): read
 * as CLOCK_MONOTONIC, its frames would sit in the past and a busy program look idle. Decided
 * at the first complete frame: the reading under which it was presented soonest after it was
 * drawn (a frame is presented after its commit, within a few frames), once for the run. */
enum { CLOCK_UNKNOWN, CLOCK_SAME, CLOCK_RAW, CLOCK_NONE };
#define UNPRESENTED_SAID 16 /* complete frames without a presentation time: the log says so */
static int presentation_clock;
#define PRESENTED_WITHIN_NS (200u * 1000u * 1000u) /* after the draw: a plausible latency */
#define PRESENTED_BEFORE_NS (20u * 1000u * 1000u)  /* before it: the commit precedes after-paint */

static uint64_t clock_ns(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC less CLOCK_MONOTONIC_RAW, read as the best of three pairs (the least time
 * between the reads around it: a read preempted would be off by that), again every 10 s (the two
 * drift apart by NTP's slewing, a few ms an hour), so that frame intervals stay the
 * compositor's. */
#define OFFSET_FOR_NS (10ull * 1000000000u)
static int64_t raw_offset_ns;
static uint64_t raw_offset_at_ns;

static void read_raw_offset(uint64_t now) {
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 3; i++) {
    uint64_t before = clock_ns(CLOCK_MONOTONIC), raw = clock_ns(CLOCK_MONOTONIC_RAW);
    uint64_t after = clock_ns(CLOCK_MONOTONIC);
    if (after - before >= best) continue;
    best = after - before;
    raw_offset_ns = (int64_t)(before + (after - before) / 2 - raw);
  }
  raw_offset_at_ns = now;
}

/* ns on CLOCK_MONOTONIC_RAW read on CLOCK_MONOTONIC. */
static uint64_t from_raw(uint64_t ns) {
  uint64_t now = lagscope__now_ns();
  if (raw_offset_at_ns == 0 || now - raw_offset_at_ns >= OFFSET_FOR_NS) read_raw_offset(now);
  return (uint64_t)((int64_t)ns + raw_offset_ns);
}

/* How far from its draw a frame presented at ns was: 0 best, UINT64_MAX implausible. */
static uint64_t distance(uint64_t ns, uint64_t drawn_ns) {
  if (ns + PRESENTED_BEFORE_NS < drawn_ns || ns > drawn_ns + PRESENTED_WITHIN_NS) return UINT64_MAX;
  return ns >= drawn_ns ? ns - drawn_ns : drawn_ns - ns;
}

/* The first frame's times decide the clock. */
static void decide_clock(uint64_t presented_ns, uint64_t drawn_ns) {
  uint64_t same = distance(presented_ns, drawn_ns), raw = distance(from_raw(presented_ns), drawn_ns);
  presentation_clock = same == UINT64_MAX && raw == UINT64_MAX ? CLOCK_NONE
                       : same <= raw                           ? CLOCK_SAME
                                                               : CLOCK_RAW;
  if (presentation_clock == CLOCK_NONE)
    lagscope__log("GTK 4: frames timed when drawn (GDK's presentation times are on a clock "
                  "lagscope does not know)");
  else
    lagscope__log("GTK 4: frames timed by their presentation (GDK's frame timings, the "
                  "compositor's clock: %s)",
                  presentation_clock == CLOCK_SAME ? "CLOCK_MONOTONIC" : "CLOCK_MONOTONIC_RAW");
}

/* A frame's time on lagscope's clock: its presentation, where GDK has one on a clock known,
 * else its draw. */
static uint64_t frame_time(int64_t presented_us, uint64_t drawn_ns) {
  static int unpresented; /* complete frames without one while the clock is undecided */
  if (presented_us <= 0) { /* none here, or this frame was not shown (a discarded one) */
    if (presentation_clock == CLOCK_UNKNOWN && ++unpresented == UNPRESENTED_SAID)
      lagscope__log("GTK 4: frames timed when drawn (GDK has no presentation time here)");
    return drawn_ns;
  }
  uint64_t ns = (uint64_t)presented_us * 1000u;
  if (presentation_clock == CLOCK_UNKNOWN) decide_clock(ns, drawn_ns);
  if (presentation_clock == CLOCK_RAW) ns = from_raw(ns);
  /* Weston's headless output says a frame was presented up to a few ms after GDK hears of it
   * (the time of the repaint it is shown in): kept, but never far ahead. */
  uint64_t latest = lagscope__now_ns() + PRESENTED_BEFORE_NS;
  return presentation_clock == CLOCK_NONE ? drawn_ns : ns < latest ? ns : latest;
}

/* The oldest waiting frame counted at ns, and forgotten. */
static void count_first(uint64_t ns) {
  lagscope__preload_frame_timed(ns);
  gdk.unref(waiting[0].clock);
  waiting_len--;
  for (int i = 0; i < waiting_len; i++) waiting[i] = waiting[i + 1];
}

/* Counts the waiting frames whose timings completed, oldest first; stops at one still
 * incomplete (its presentation time may yet come). */
static void count_complete(void) {
  while (waiting_len > 0) {
    waiting_frame *w = &waiting[0];
    void *timings = gdk.timings(w->clock, w->counter);
    if (timings != NULL && gdk.complete(timings)) {
      count_first(frame_time(gdk.presented(timings), w->drawn_ns));
    } else if (timings == NULL || gdk.counter(w->clock) - w->counter >= NEVER_COMPLETE) {
      count_first(w->drawn_ns);
    } else {
      return;
    }
  }
}

/* The frame clock's frame, drawn: alive now, counted once its timings complete (the list
 * full: the oldest counts at its draw time). */
static void frame_drawn(void *clock) {
  if (waiting_len == WAITING) count_first(waiting[0].drawn_ns);
  waiting[waiting_len++] = (waiting_frame){gdk.ref(clock), gdk.counter(clock), lagscope__now_ns()};
  lagscope__preload_frame_drawn(LAGSCOPE__LOOP_GLIB);
}

/* The instance a signal is emitted on: the first GValue's pointer (its GType, then its data). */
static void *instance_of(const void *values) { return ((void *const *)values)[1]; }

/* A frame clock's cycle is over: one frame when a surface drew in it; then the frames whose
 * presentation time GDK now knows are counted. */
static int on_after_paint(void *hint, unsigned n_values, const void *values, void *data) {
  (void)hint, (void)data;
  if (!on_main_thread()) return 1;
  void *clock = n_values > 0 ? instance_of(values) : NULL;
  if (rendering && (gdk.presented == NULL || clock == NULL))
    lagscope__preload_frame_presented(LAGSCOPE__LOOP_GLIB);
  else if (rendering)
    frame_drawn(clock);
  rendering = 0;
  if (gdk.presented != NULL) count_complete();
  return 1;
}

/* GDK's frame timings, looked up once: all found, or none used. */
static void find_timings(void) {
  clock_counter_fn counter = (clock_counter_fn)lagscope__preload_real_symbol(
      "gdk_frame_clock_get_frame_counter", GTK4_SONAME);
  clock_timings_fn timings =
      (clock_timings_fn)lagscope__preload_real_symbol("gdk_frame_clock_get_timings", GTK4_SONAME);
  timings_complete_fn complete = (timings_complete_fn)lagscope__preload_real_symbol(
      "gdk_frame_timings_get_complete", GTK4_SONAME);
  timings_presented_fn presented = (timings_presented_fn)lagscope__preload_real_symbol(
      "gdk_frame_timings_get_presentation_time", GTK4_SONAME);
  object_ref_fn ref = (object_ref_fn)lagscope__preload_real_symbol("g_object_ref", GOBJECT_SONAME);
  object_unref_fn unref =
      (object_unref_fn)lagscope__preload_real_symbol("g_object_unref", GOBJECT_SONAME);
  if (counter == NULL || timings == NULL || complete == NULL || presented == NULL || ref == NULL ||
      unref == NULL)
    return;
  gdk.counter = counter, gdk.timings = timings, gdk.complete = complete;
  gdk.ref = ref, gdk.unref = unref, gdk.presented = presented;
}

/* The emission hook on signal (of type) named name; 0, or -1 when GObject has no such signal. */
static int hook_signal(class_ref_fn class_ref, signal_lookup_fn lookup, add_emission_hook_fn add,
                       const char *getter, const char *name, emission_hook_fn hook) {
  get_type_fn get_type = (get_type_fn)lagscope__preload_real_symbol(getter, GTK4_SONAME);
  if (get_type == NULL) return -1;
  gtype type = get_type();
  class_ref(type); /* the signal exists once the class does; kept for the program's life */
  unsigned signal = lookup(name, type);
  if (signal == 0) return -1;
  add(signal, 0, hook, NULL, NULL);
  return 0;
}

/* (preload.h) Once, on the main thread: when libgtk-4 is loaded, GTK 4's frames are counted
 * from here on. */
void lagscope__preload_gtk4_hooks_install(void) {
  static int tried;
  if (tried) return;
  tried = 1;
  void *gtk = dlopen(GTK4_SONAME, RTLD_LAZY | RTLD_NOLOAD);
  if (gtk == NULL) return;
  dlclose(gtk);
  class_ref_fn class_ref =
      (class_ref_fn)lagscope__preload_real_symbol("g_type_class_ref", GOBJECT_SONAME);
  signal_lookup_fn lookup =
      (signal_lookup_fn)lagscope__preload_real_symbol("g_signal_lookup", GOBJECT_SONAME);
  add_emission_hook_fn add = (add_emission_hook_fn)lagscope__preload_real_symbol(
      "g_signal_add_emission_hook", GOBJECT_SONAME);
  if (class_ref == NULL || lookup == NULL || add == NULL) return;
  find_timings();
  if (hook_signal(class_ref, lookup, add, "gdk_surface_get_type", "render", on_render) != 0)
    return;
  hook_signal(class_ref, lookup, add, "gdk_frame_clock_get_type", "after-paint", on_after_paint);
}
