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
 * Installed once, on the main thread, when GLib's loop is first seen there (hooks.c) with
 * libgtk-4 loaded. GObject allocates the hooks there, once. The types and signals are looked up
 * by name with plain C types: nothing of GTK is loaded that the program did not load. */
#define _GNU_SOURCE
#include "preload.h"

#include <dlfcn.h>
#include <stddef.h>

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

/* Set by "render", spent by "after-paint", on the thread that emits them (GDK's: the main
 * thread; lagscope__preload_frame_presented ignores any other). */
static __thread int rendering __attribute__((tls_model("initial-exec")));

/* A surface is drawing its frame. G_TYPE_BOOLEAN TRUE: the hook stays. */
static int on_render(void *hint, unsigned n_values, const void *values, void *data) {
  (void)hint, (void)n_values, (void)values, (void)data;
  rendering = 1;
  return 1;
}

/* A frame clock's cycle is over: one frame when a surface drew in it. */
static int on_after_paint(void *hint, unsigned n_values, const void *values, void *data) {
  (void)hint, (void)n_values, (void)values, (void)data;
  if (!rendering) return 1;
  rendering = 0;
  lagscope__preload_frame_presented(LAGSCOPE__LOOP_GLIB);
  return 1;
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
  if (hook_signal(class_ref, lookup, add, "gdk_surface_get_type", "render", on_render) != 0)
    return;
  hook_signal(class_ref, lookup, add, "gdk_frame_clock_get_type", "after-paint", on_after_paint);
}
