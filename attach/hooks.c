/* The functions liblagscope-preload interposes: where an unchanged program's loop shows itself.
 *
 * Each hook calls the real function (found once, with dlsym) and, on the watched thread only
 * (the main thread, or a Vulkan program's presenting thread in its place), tells lagscope what
 * it learnt: a frame (a present or a swap), a wait for input (idle), or a
 * pass through the loop, where a ping that is waiting is answered. None takes a lock of
 * lagscope's or allocates; none changes what the real function is given or returns.
 *
 * The prototypes are the libraries' ABI written with plain C types (a GLib gboolean is an
 * int, an SDL_Event * or a GMainLoop * a pointer), so that no toolkit's headers are needed
 * to build this and nothing of a toolkit is loaded that the program did not load itself. */
#define _GNU_SOURCE
#include "preload.h"

#include "gl_hud.h"
#include "internal.h" /* lagscope__main_thread_watch, _frame_at, lagscope__log */
#include "sdl_hud.h"
#include "wayland_hud.h"
#include "x11_overlay.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The hooks are the only names the preload exports (the target's visibility is hidden). */
#define HOOK __attribute__((visibility("default")))

/* ---- the real functions ----------------------------------------------------------------- */

/* (preload.h) The soname covers a library loaded with RTLD_LOCAL: a plugin's or a Python
 * module's dependency. Allocates nothing of lagscope's. */
void *lagscope__preload_real_symbol(const char *name, const char *soname) {
  void *found = dlsym(RTLD_NEXT, name);
  if (found != NULL || soname == NULL) return found;
  void *library = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD);
  if (library == NULL) return NULL;
  found = dlsym(library, name);
  dlclose(library);
  return found;
}

/* lagscope__preload_real_symbol, looked up once into cache. */
static void *cached_symbol(_Atomic(void *) *cache, const char *name, const char *soname) {
  void *found = atomic_load_explicit(cache, memory_order_relaxed);
  if (found == NULL) {
    found = lagscope__preload_real_symbol(name, soname);
    atomic_store_explicit(cache, found, memory_order_relaxed);
  }
  return found;
}

/* Declares `real` as the cached real definition of name (type type). */
#define REAL(type, name, soname)                                                          \
  static _Atomic(void *) name##_cache;                                                      \
  type real = (type)cached_symbol(&name##_cache, #name, soname);

/* ---- the main thread, the loops seen and the waiting ping ---------------------------------- */

static atomic_uint loops_seen;
static _Atomic(lagscope_main_fn) ping_fn;
static _Atomic(void *) ping_arg;
static atomic_int ping_waiting;

typedef void (*context_wakeup_fn)(void *context);
static _Atomic(context_wakeup_fn) glib_wakeup; /* set once the ping's GLib source is attached */
static _Atomic(void *) glib_context;             /* GLib's default main context */

/* The thread lagscope watches: the process's main thread (0 here), or the one that presents a
 * Vulkan program's frames when the main thread showed no loop (lagscope__preload_presenter_
 * watched). Each thread's id is read once. */
static atomic_int watched_tid;
static __thread int own_tid __attribute__((tls_model("initial-exec"))); /* 0: not read yet */

static int on_watched_thread(void) {
  if (own_tid == 0) own_tid = (int)syscall(SYS_gettid);
  int watched = atomic_load_explicit(&watched_tid, memory_order_relaxed);
  if (watched == 0) { /* the main thread's id is the process's: read once (getpid is a call) */
    static atomic_int main_tid;
    watched = atomic_load_explicit(&main_tid, memory_order_relaxed);
    if (watched == 0) atomic_store_explicit(&main_tid, watched = (int)getpid(), memory_order_relaxed);
  }
  return own_tid == watched;
}

unsigned lagscope__preload_loops(void) { return atomic_load(&loops_seen); }

void lagscope__preload_hooks_arm(void) { lagscope_idle_begin(); }

/* The first loop seen ends the idle that lagscope__preload_hooks_arm began. Main thread. */
static void loop_seen(unsigned loop) {
  if (atomic_load_explicit(&loops_seen, memory_order_relaxed) & loop) return;
  if (atomic_fetch_or(&loops_seen, loop) == 0) lagscope_idle_end();
}

/* Answers the ping that waits, if one does. Main thread; an atomic load when none waits. */
static void answer_waiting_ping(void) {
  if (!atomic_load_explicit(&ping_waiting, memory_order_relaxed)) return;
  if (!atomic_exchange_explicit(&ping_waiting, 0, memory_order_acquire)) return;
  lagscope_main_fn fn = atomic_load_explicit(&ping_fn, memory_order_relaxed);
  fn(atomic_load_explicit(&ping_arg, memory_order_relaxed));
}

int lagscope__preload_post(lagscope_main_fn fn, void *arg, void *user) {
  (void)user;
  atomic_store_explicit(&ping_fn, fn, memory_order_relaxed);
  atomic_store_explicit(&ping_arg, arg, memory_order_relaxed);
  atomic_store_explicit(&ping_waiting, 1, memory_order_release);
  /* GLib's loop, once its source is there, is woken to answer (a write to its eventfd). */
  context_wakeup_fn wakeup = atomic_load_explicit(&glib_wakeup, memory_order_acquire);
  if (wakeup != NULL) wakeup(atomic_load_explicit(&glib_context, memory_order_relaxed));
  return 0;
}

/* A pass through the main loop: alive, and the waiting ping answered. */
static void loop_pass(unsigned loop) {
  if (!on_watched_thread()) return;
  loop_seen(loop);
  answer_waiting_ping();
}

/* (preload.h) Not while the HUD is a subsurface on Wayland (checked first: the X11 side notes
 * that frames want the HUD). */
int lagscope__preload_frame_hud_may_draw(void) {
  return !lagscope__hud_wl_showing() && lagscope__hud_x11_frame_may_draw();
}

static atomic_int toolkit_frames; /* a toolkit's hook counted a frame: commits are not frames */

/* timed_later: the frame's time comes later (lagscope__preload_frame_timed): alive now. */
static void frame_drawn(unsigned loop, int timed_later) {
  if (!on_watched_thread()) return;
  if (loop != LAGSCOPE__LOOP_WAYLAND) atomic_store_explicit(&toolkit_frames, 1, memory_order_relaxed);
  loop_seen(loop);
  if (timed_later)
    lagscope_heartbeat();
  else
    lagscope_frame();
  answer_waiting_ping();
}

static void frame_presented(unsigned loop) { frame_drawn(loop, 0); }

void lagscope__preload_frame_presented(unsigned loop) { frame_presented(loop); }

void lagscope__preload_frame_drawn(unsigned loop) { frame_drawn(loop, 1); }

void lagscope__preload_frame_timed(uint64_t timestamp_ns) {
  if (on_watched_thread()) lagscope__main_thread_frame_at(timestamp_ns);
}

/* The presents a thread makes before it is watched in the main thread's place: a program whose
 * main thread sets up its loop while its render thread begins to present keeps its main thread
 * watched. */
#define PRESENTS_BEFORE_WATCHED 30
static __thread unsigned presents_here __attribute__((tls_model("initial-exec")));

int lagscope__preload_presenter_watched(void) {
  if (on_watched_thread()) return 1;
  if (atomic_load_explicit(&loops_seen, memory_order_relaxed) != 0 ||
      ++presents_here < PRESENTS_BEFORE_WATCHED)
    return 0;
  int none = 0;
  if (!atomic_compare_exchange_strong(&watched_tid, &none, own_tid)) return on_watched_thread();
  lagscope__main_thread_watch(own_tid); /* its stacks, its pings, its frames */
  lagscope__log("the main thread showed no loop: thread %d, which presents Vulkan frames, is the "
                "one watched",
                own_tid);
  return 1;
}

/* (preload.h) hooks_wayland.c's frames and waits. */
void lagscope__preload_wayland_frame(void) {
  if (!atomic_load_explicit(&toolkit_frames, memory_order_relaxed)) frame_presented(LAGSCOPE__LOOP_WAYLAND);
}

void lagscope__preload_wayland_wait(int begins) {
  loop_pass(LAGSCOPE__LOOP_WAYLAND);
  if (begins) lagscope_idle_begin(); else lagscope_idle_end();
}

/* ---- GLib: the default main context --------------------------------------------------------- */

typedef void *(*context_default_fn)(void);

/* 1 if context (NULL: the default) is GLib's default main context. */
static int is_default_context(void *context) {
  if (context == NULL) return 1;
  REAL(context_default_fn, g_main_context_default, "libglib-2.0.so.0")
  return real != NULL && real() == context;
}

/* The ping's source in GLib's default context: one for the program's life, made and attached
 * by the main thread, ready whenever a ping waits. A source per ping (g_idle_add) would be
 * allocated by the monitor (a malloc arena of its own, which GLib's objects then fill, 80 KiB
 * resident in GTK) and would take the context's lock, which the main thread waits on. The
 * struct is GLib's GSourceFuncs: prepare, check, dispatch, finalize and two closure slots. */
typedef struct glib_source_funcs {
  int (*prepare)(void *source, int *timeout_ms);
  int (*check)(void *source);
  int (*dispatch)(void *source, void *callback, void *data);
  void (*finalize)(void *source);
  void *closure_callback, *closure_marshal;
} glib_source_funcs;

static int ping_source_prepare(void *source, int *timeout_ms) {
  (void)source;
  *timeout_ms = -1; /* the wake-up, not a timeout, says when */
  return atomic_load_explicit(&ping_waiting, memory_order_relaxed);
}

static int ping_source_check(void *source) {
  (void)source;
  return atomic_load_explicit(&ping_waiting, memory_order_relaxed);
}

/* Run by GLib's loop on the thread that iterates it: G_SOURCE_CONTINUE. */
static int ping_source_dispatch(void *source, void *callback, void *data) {
  (void)source, (void)callback, (void)data;
  if (on_watched_thread()) answer_waiting_ping();
  return 1;
}

static const glib_source_funcs ping_source_funcs = {ping_source_prepare, ping_source_check,
                                                    ping_source_dispatch, NULL, NULL, NULL};

/* The bytes given to g_source_new: at least a GSource (public ABI: 96 bytes on 64-bit targets,
 * 56 on 32-bit ones), which GLib checks. */
#define GLIB_SOURCE_BYTES 128u

typedef void *(*source_new_fn)(const glib_source_funcs *funcs, unsigned size);
typedef unsigned (*source_attach_fn)(void *source, void *context);
typedef void (*source_unref_fn)(void *source);

/* Attaches the ping's source to the default context; 0, or -1 when GLib lacks a function.
 * Main thread, once; GLib allocates the source there. */
static int attach_ping_source(void) {
  const char *glib = "libglib-2.0.so.0";
  context_default_fn context_default =
      (context_default_fn)lagscope__preload_real_symbol("g_main_context_default", glib);
  source_new_fn source_new = (source_new_fn)lagscope__preload_real_symbol("g_source_new", glib);
  source_attach_fn source_attach =
      (source_attach_fn)lagscope__preload_real_symbol("g_source_attach", glib);
  source_unref_fn source_unref =
      (source_unref_fn)lagscope__preload_real_symbol("g_source_unref", glib);
  context_wakeup_fn wakeup =
      (context_wakeup_fn)lagscope__preload_real_symbol("g_main_context_wakeup", glib);
  if (context_default == NULL || source_new == NULL || source_attach == NULL ||
      source_unref == NULL || wakeup == NULL)
    return -1;
  void *context = context_default();
  void *source = source_new(&ping_source_funcs, GLIB_SOURCE_BYTES);
  if (context == NULL || source == NULL) return -1;
  source_attach(source, context); /* the context holds it from now on */
  source_unref(source);
  atomic_store_explicit(&glib_context, context, memory_order_relaxed);
  atomic_store_explicit(&glib_wakeup, wakeup, memory_order_release);
  return 0;
}

/* The main thread iterates GLib's default context: pings go through it from now on. */
static void glib_loop_seen(void) {
  if (atomic_load_explicit(&glib_wakeup, memory_order_relaxed) == NULL && attach_ping_source() != 0)
    return;
  lagscope__preload_gtk4_hooks_install(); /* GTK 4's frames (hooks_gtk4.c) */
  loop_pass(LAGSCOPE__LOOP_GLIB);
}

typedef void (*loop_run_fn)(void *loop);
typedef void *(*loop_context_fn)(void *loop);

HOOK void g_main_loop_run(void *loop) {
  REAL(loop_run_fn, g_main_loop_run, "libglib-2.0.so.0")
  if (on_watched_thread()) {
    void *context = NULL;
    {
      REAL(loop_context_fn, g_main_loop_get_context, "libglib-2.0.so.0")
      context = real != NULL ? real(loop) : NULL;
    }
    if (is_default_context(context)) glib_loop_seen();
  }
  if (real != NULL) real(loop);
}

typedef int (*iteration_fn)(void *context, int may_block);

HOOK int g_main_context_iteration(void *context, int may_block) {
  REAL(iteration_fn, g_main_context_iteration, "libglib-2.0.so.0")
  if (on_watched_thread() && is_default_context(context)) glib_loop_seen();
  return real != NULL ? real(context, may_block) : 0;
}

/* GApplication runs the app's activate handler before its first iteration. */
typedef int (*application_run_fn)(void *application, int argc, char **argv);

HOOK int g_application_run(void *application, int argc, char **argv) {
  REAL(application_run_fn, g_application_run, "libgio-2.0.so.0")
  if (on_watched_thread()) glib_loop_seen();
  return real != NULL ? real(application, argc, argv) : 1;
}

/* GTK 3 draws each window's frame between gdk_window_begin_draw_frame and this. */
typedef void (*end_draw_frame_fn)(void *window, void *context);

HOOK void gdk_window_end_draw_frame(void *window, void *context) {
  REAL(end_draw_frame_fn, gdk_window_end_draw_frame, "libgdk-3.so.0")
  if (real != NULL) real(window, context);
  frame_presented(LAGSCOPE__LOOP_GLIB);
}

typedef void *(*current_context_fn)(void);

/* The calling thread's current GL context, from the API's getter (cached in cache); NULL when
 * none or no such API. */
static void *current_context(_Atomic(void *) *cache, const char *getter, const char *soname) {
  current_context_fn get = (current_context_fn)cached_symbol(cache, getter, soname);
  return get != NULL ? get() : NULL;
}

/* ---- SDL2 ----------------------------------------------------------------------------------- */

typedef int (*poll_event_fn)(void *event);
typedef int (*wait_event_timeout_fn)(void *event, int timeout_ms);
typedef void (*present_fn)(void *target);

HOOK int SDL_PollEvent(void *event) {
  REAL(poll_event_fn, SDL_PollEvent, "libSDL2-2.0.so.0")
  loop_pass(LAGSCOPE__LOOP_SDL);
  return real != NULL ? real(event) : 0;
}

/* A wait for input: idle while it lasts, however long. */
static int sdl_wait(void *event, int timeout_ms, int with_timeout) {
  int main_thread = on_watched_thread();
  if (main_thread) {
    loop_pass(LAGSCOPE__LOOP_SDL);
    lagscope_idle_begin();
  }
  int got = 0;
  if (with_timeout) {
    REAL(wait_event_timeout_fn, SDL_WaitEventTimeout, "libSDL2-2.0.so.0")
    got = real != NULL ? real(event, timeout_ms) : 0;
  } else {
    REAL(poll_event_fn, SDL_WaitEvent, "libSDL2-2.0.so.0")
    got = real != NULL ? real(event) : 0;
  }
  if (main_thread) {
    lagscope_idle_end();
    answer_waiting_ping();
  }
  return got;
}

HOOK int SDL_WaitEvent(void *event) { return sdl_wait(event, -1, 0); }
HOOK int SDL_WaitEventTimeout(void *event, int timeout_ms) { return sdl_wait(event, timeout_ms, 1); }

/* The HUD is copied into the frame first (sdl_hud.c), on the main thread only. */
HOOK void SDL_RenderPresent(void *renderer) {
  REAL(present_fn, SDL_RenderPresent, "libSDL2-2.0.so.0")
  if (real != NULL && on_watched_thread() && lagscope__preload_frame_hud_may_draw())
    lagscope__sdl_hud_draw(renderer);
  if (real != NULL) real(renderer);
  frame_presented(LAGSCOPE__LOOP_SDL);
}

/* The HUD's texture dies with its renderer: forgotten before the app destroys one, and when one
 * is made (a new renderer at a dead one's address, SDL having destroyed the old one itself). */
typedef void (*destroy_fn)(void *object);
typedef void *(*create_renderer_fn)(void *window, int index, uint32_t flags);
typedef void *(*create_software_renderer_fn)(void *surface);
typedef void *(*create_window_fn)(const char *title, int x, int y, int w, int h, uint32_t flags);

HOOK void SDL_DestroyRenderer(void *renderer) {
  REAL(destroy_fn, SDL_DestroyRenderer, "libSDL2-2.0.so.0")
  lagscope__sdl_hud_forget(renderer);
  if (real != NULL) real(renderer);
}

HOOK void *SDL_CreateRenderer(void *window, int index, uint32_t flags) {
  REAL(create_renderer_fn, SDL_CreateRenderer, "libSDL2-2.0.so.0")
  void *renderer = real != NULL ? real(window, index, flags) : NULL;
  lagscope__sdl_hud_forget(renderer);
  return renderer;
}

HOOK void *SDL_CreateSoftwareRenderer(void *surface) {
  REAL(create_software_renderer_fn, SDL_CreateSoftwareRenderer, "libSDL2-2.0.so.0")
  void *renderer = real != NULL ? real(surface) : NULL;
  lagscope__sdl_hud_forget(renderer);
  return renderer;
}

/* A window's renderer may go with it; a Vulkan window gets no HUD, said once. */
HOOK void SDL_DestroyWindow(void *window) {
  REAL(destroy_fn, SDL_DestroyWindow, "libSDL2-2.0.so.0")
  if (on_watched_thread()) lagscope__sdl_hud_window_gone(window);
  if (real != NULL) real(window);
}

/* SDL2 opens its X display through dlsym, which the XOpenDisplay hook never sees: a window on
 * SDL's x11 driver stands for it, on $DISPLAY, the display SDL's x11 driver opens. lagscope's
 * connection reads the display's rate there; with --hud-mode overlay it shows the HUD too (by
 * default an SDL program's HUD is in its frames). */
typedef const char *(*video_driver_fn)(void);

static void sdl_window_overlay(void) {
  REAL(video_driver_fn, SDL_GetCurrentVideoDriver, "libSDL2-2.0.so.0")
  const char *driver = real != NULL ? real() : NULL;
  if (driver != NULL && strcmp(driver, "x11") == 0)
    lagscope__preload_display_opened(NULL, lagscope__preload_overlay_only());
}

HOOK void *SDL_CreateWindow(const char *title, int x, int y, int w, int h, uint32_t flags) {
  REAL(create_window_fn, SDL_CreateWindow, "libSDL2-2.0.so.0")
  void *window = real != NULL ? real(title, x, y, w, h, flags) : NULL;
  if (on_watched_thread()) lagscope__sdl_hud_window_made(window, flags);
  if (window != NULL) sdl_window_overlay();
  return window;
}

typedef void (*drawable_size_fn)(void *window, int *width, int *height);

static void *sdl_gl_proc(const char *name) {
  REAL(lagscope__gl_proc_fn, SDL_GL_GetProcAddress, "libSDL2-2.0.so.0")
  return real != NULL ? real(name) : NULL;
}

/* SDL calls the GL swap through its own pointer, which no hook sees: the HUD is drawn here. */
static void sdl_draw_hud(void *window) {
  static _Atomic(void *) getter;
  void *context = current_context(&getter, "SDL_GL_GetCurrentContext", "libSDL2-2.0.so.0");
  REAL(drawable_size_fn, SDL_GL_GetDrawableSize, "libSDL2-2.0.so.0")
  int width = 0, height = 0;
  if (context == NULL || real == NULL) return;
  real(window, &width, &height);
  lagscope__gl_hud_draw(context, sdl_gl_proc, width, height);
}

HOOK void SDL_GL_SwapWindow(void *window) {
  REAL(present_fn, SDL_GL_SwapWindow, "libSDL2-2.0.so.0")
  if (on_watched_thread() && lagscope__preload_frame_hud_may_draw()) sdl_draw_hud(window);
  if (real != NULL) real(window);
  frame_presented(LAGSCOPE__LOOP_SDL);
}

typedef void (*delete_context_fn)(void *context);

HOOK void SDL_GL_DeleteContext(void *context) {
  REAL(delete_context_fn, SDL_GL_DeleteContext, "libSDL2-2.0.so.0")
  lagscope__gl_hud_forget(context);
  if (real != NULL) real(context);
}

/* ---- OpenGL swaps (with the HUD drawn into the frame first) and Xlib's wait ------------------ */

typedef void (*glx_swap_fn)(void *display, unsigned long drawable);
typedef unsigned (*egl_swap_fn)(void *display, void *surface);
typedef int (*glx_query_drawable_fn)(void *display, unsigned long drawable, int name, unsigned *out);
typedef unsigned (*egl_query_surface_fn)(void *display, void *surface, int name, int *out);
typedef void (*glx_destroy_context_fn)(void *display, void *context);
typedef int (*next_event_fn)(void *display, void *event);
typedef void *(*open_display_fn)(const char *name);
typedef unsigned (*egl_destroy_context_fn)(void *display, void *context);

#define GLX_WIDTH 0x801D
#define GLX_HEIGHT 0x801E
#define EGL_HEIGHT 0x3056
#define EGL_WIDTH 0x3057

static void *glx_proc(const char *name) {
  REAL(lagscope__gl_proc_fn, glXGetProcAddressARB, "libGLX.so.0")
  return real != NULL ? real(name) : NULL;
}

static void *egl_proc(const char *name) {
  REAL(lagscope__gl_proc_fn, eglGetProcAddress, "libEGL.so.1")
  return real != NULL ? real(name) : NULL;
}

static void glx_draw_hud(void *display, unsigned long drawable) {
  static _Atomic(void *) getter;
  void *context = current_context(&getter, "glXGetCurrentContext", "libGLX.so.0");
  REAL(glx_query_drawable_fn, glXQueryDrawable, "libGLX.so.0")
  unsigned width = 0, height = 0;
  if (context == NULL || real == NULL) return;
  real(display, drawable, GLX_WIDTH, &width);
  real(display, drawable, GLX_HEIGHT, &height);
  lagscope__gl_hud_draw(context, glx_proc, (int)width, (int)height);
}

static void egl_draw_hud(void *display, void *surface) {
  static _Atomic(void *) getter;
  void *context = current_context(&getter, "eglGetCurrentContext", "libEGL.so.1");
  REAL(egl_query_surface_fn, eglQuerySurface, "libEGL.so.1")
  int width = 0, height = 0;
  if (context == NULL || real == NULL) return;
  if (!real(display, surface, EGL_WIDTH, &width) || !real(display, surface, EGL_HEIGHT, &height))
    return;
  lagscope__gl_hud_draw(context, egl_proc, width, height);
}

HOOK void glXSwapBuffers(void *display, unsigned long drawable) {
  REAL(glx_swap_fn, glXSwapBuffers, "libGLX.so.0")
  if (on_watched_thread()) lagscope__hud_x11_saw_window(drawable);
  if (on_watched_thread() && lagscope__preload_frame_hud_may_draw()) glx_draw_hud(display, drawable);
  if (real != NULL) real(display, drawable);
  frame_presented(LAGSCOPE__LOOP_GL);
}

HOOK unsigned eglSwapBuffers(void *display, void *surface) {
  REAL(egl_swap_fn, eglSwapBuffers, "libEGL.so.1")
  if (on_watched_thread() && lagscope__preload_frame_hud_may_draw()) egl_draw_hud(display, surface);
  unsigned swapped = real != NULL ? real(display, surface) : 0;
  frame_presented(LAGSCOPE__LOOP_GL);
  return swapped;
}

/* The swaps with damage (EGL_KHR_swap_buffers_with_damage, EGL_EXT_swap_buffers_with_damage),
 * which GL toolkits and many Wayland clients use: extensions, which libglvnd's libEGL does not
 * export, so a program gets them from eglGetProcAddress (hooked below) and the real ones come
 * from there too. */
typedef unsigned (*egl_swap_damage_fn)(void *display, void *surface, const int *rects, int n);
static _Atomic(egl_swap_damage_fn) swap_damage_khr, swap_damage_ext;

static unsigned egl_swap_with_damage(egl_swap_damage_fn real, void *display, void *surface,
                                     const int *rects, int n) {
  if (on_watched_thread() && lagscope__preload_frame_hud_may_draw()) egl_draw_hud(display, surface);
  unsigned swapped = real != NULL ? real(display, surface, rects, n) : 0;
  frame_presented(LAGSCOPE__LOOP_GL);
  return swapped;
}

HOOK unsigned eglSwapBuffersWithDamageKHR(void *display, void *surface, const int *rects, int n) {
  return egl_swap_with_damage(atomic_load(&swap_damage_khr), display, surface, rects, n);
}

HOOK unsigned eglSwapBuffersWithDamageEXT(void *display, void *surface, const int *rects, int n) {
  return egl_swap_with_damage(atomic_load(&swap_damage_ext), display, surface, rects, n);
}

/* The swaps' addresses handed out are the hooks', the real ones kept for them. */
HOOK void *eglGetProcAddress(const char *name) {
  REAL(lagscope__gl_proc_fn, eglGetProcAddress, "libEGL.so.1")
  void *found = real != NULL ? real(name) : NULL;
  if (found == NULL || name == NULL) return found;
  if (strcmp(name, "eglSwapBuffersWithDamageKHR") == 0) {
    atomic_store(&swap_damage_khr, (egl_swap_damage_fn)found);
    return (void *)eglSwapBuffersWithDamageKHR;
  }
  if (strcmp(name, "eglSwapBuffersWithDamageEXT") == 0) {
    atomic_store(&swap_damage_ext, (egl_swap_damage_fn)found);
    return (void *)eglSwapBuffersWithDamageEXT;
  }
  return found;
}

/* The HUD's objects die with their context: forgotten (on any thread), so that a later context
 * that happens to get the same address starts afresh. */
HOOK void glXDestroyContext(void *display, void *context) {
  REAL(glx_destroy_context_fn, glXDestroyContext, "libGLX.so.0")
  lagscope__gl_hud_forget(context);
  if (real != NULL) real(display, context);
}

HOOK unsigned eglDestroyContext(void *display, void *context) {
  REAL(egl_destroy_context_fn, eglDestroyContext, "libEGL.so.1")
  lagscope__gl_hud_forget(context);
  return real != NULL ? real(display, context) : 0;
}

/* Blocks until an X event comes when none is queued: a wait for input. */
HOOK int XNextEvent(void *display, void *event) {
  REAL(next_event_fn, XNextEvent, "libX11.so.6")
  int main_thread = on_watched_thread();
  if (main_thread) {
    loop_pass(LAGSCOPE__LOOP_X11);
    lagscope_idle_begin();
  }
  int rc = real != NULL ? real(display, event) : 0;
  if (main_thread) {
    lagscope_idle_end();
    answer_waiting_ping();
  }
  return rc;
}

/* A program that talks to an X server: the HUD's overlay window (hud/linux/x11_overlay.c) goes
 * to the same display, on a connection and thread of lagscope's. GTK's and Qt's X11 backends
 * open their display here. */
HOOK void *XOpenDisplay(const char *name) {
  REAL(open_display_fn, XOpenDisplay, "libX11.so.6")
  void *display = real != NULL ? real(name) : NULL;
  if (display != NULL) lagscope__preload_display_opened(name, 1);
  return display;
}
