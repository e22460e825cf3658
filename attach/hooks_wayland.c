/* The preload's libwayland-client hooks: any Wayland client's connection, toplevel surface,
 * frames and wait for input, where no toolkit hook shows them, and the HUD on Wayland
 * (hud/linux/wayland_hud.h) made a subsurface of its toplevel.
 *
 * Every request a client sends goes through wl_proxy_marshal_flags (libwayland 1.20 on: the
 * protocol's inline wrappers, wl_surface_commit among them, call it), so one hook sees them
 * all: xdg_wm_base.get_xdg_surface (which wl_surface an xdg_surface is), xdg_surface.
 * get_toplevel (that surface is the toplevel), xdg_surface.set_window_geometry (the window in
 * it), the size of the buffers the toplevel shows (wl_shm_pool.create_buffer,
 * zwp_linux_buffer_params_v1.create_immed, wl_surface.attach and set_buffer_scale: the window
 * is its surface when the program sets no geometry) and wl_surface.commit of the toplevel (a
 * frame). The hook passes the request on unchanged
 * through wl_proxy_marshal_array_flags, its arguments read from the variadic list as libwayland
 * reads them, by the request's signature. Requests from programs built against libwayland
 * older than 1.20 (wl_proxy_marshal, _constructor) are not seen: no frames, no HUD. */
#define _GNU_SOURCE
#include "preload.h"

#include "wayland_hud.h"
#include "wayland_abi.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define HOOK __attribute__((visibility("default")))
#define MAX_ARGS 20 /* WL_CLOSURE_MAX_ARGS */
#define XDG_SURFACES 16
#define BUFFERS 16 /* a program swaps 2 or 3; Mesa's EGL keeps up to 4 */
#define WRAPPERS 8  /* Mesa's EGL makes one per window surface */

typedef void *(*marshal_array_fn)(void *proxy, uint32_t opcode, const struct wl_interface *iface,
                                  uint32_t version, uint32_t flags, union wl_argument *args);

enum { WM_BASE_GET_XDG_SURFACE = 2, XDG_SURFACE_GET_TOPLEVEL = 1, XDG_SURFACE_SET_GEOMETRY = 3 };
enum { SURFACE_DESTROY = 0, SURFACE_ATTACH = 1, SURFACE_COMMIT = 6, SURFACE_SET_SCALE = 8 };
enum { XDG_SURFACE_DESTROY = 0, BUFFER_DESTROY = 0, SHM_POOL_CREATE_BUFFER = 0 };
enum { DMABUF_PARAMS_CREATE_IMMED = 3 };

/* The main thread's: which wl_surface each xdg_surface is, the toplevel, its geometry. */
static struct {
  void *xdg, *surface;
} xdg_surfaces[XDG_SURFACES];
static void *toplevel, *toplevel_xdg;
static int geometry[4];
/* The buffers made on the main thread, with their size in pixels; the toplevel's attached one
 * and its scale. */
static struct {
  void *buffer;
  int width, height;
} buffers[BUFFERS];
static int next_buffer;
static void *attached;
static int buffer_scale = 1;
/* Proxy wrappers made on the main thread, and what they wrap: Mesa's EGL attaches and commits
 * the program's surface through one (wl_proxy_create_wrapper). */
static struct {
  void *wrapper, *wrapped;
} wrappers[WRAPPERS];

/* 1 on the process's main thread, cached per thread: the hook runs at every request. */
static __thread int thread_kind __attribute__((tls_model("initial-exec"))); /* 0: not known */

static int on_main_thread(void) {
  if (thread_kind == 0) thread_kind = syscall(SYS_gettid) == getpid() ? 1 : 2;
  return thread_kind == 1;
}

static const struct wl_interface *interface_of(void *proxy) {
  return proxy != NULL ? *(const struct wl_interface *const *)proxy : NULL;
}

/* The arguments as libwayland's wl_argument_from_va_list reads them; their count. */
static int read_args(const char *signature, va_list ap, union wl_argument *args) {
  int n = 0;
  for (const char *c = signature; *c != '\0' && n < MAX_ARGS; c++) {
    switch (*c) {
    case 'i': case 'h': case 'f': args[n++].i = va_arg(ap, int32_t); break;
    case 'u': args[n++].u = va_arg(ap, uint32_t); break;
    case 's': args[n++].s = va_arg(ap, const char *); break;
    case 'o': case 'n': case 'a': args[n++].o = va_arg(ap, void *); break;
    default: break; /* a version's digits, '?' (nullable) */
    }
  }
  return n;
}

/* The xdg_surface a get_xdg_surface made, and its wl_surface. Main thread. */
static void note_xdg_surface(void *made, void *surface) {
  for (int i = 0; i < XDG_SURFACES && made != NULL; i++)
    if (xdg_surfaces[i].xdg == NULL || xdg_surfaces[i].xdg == made) {
      xdg_surfaces[i].xdg = made, xdg_surfaces[i].surface = surface;
      return;
    }
}

static void forget_buffer(void *buffer) {
  for (int i = 0; i < BUFFERS; i++)
    if (buffers[i].buffer == buffer) buffers[i].buffer = NULL;
  if (attached == buffer) attached = NULL;
}

/* The proxy a request goes to: the wrapped one for a wrapper. Main thread. */
static void *unwrapped(void *proxy) {
  for (int i = 0; i < WRAPPERS && proxy != NULL; i++)
    if (wrappers[i].wrapper == proxy) return wrappers[i].wrapped;
  return proxy;
}

/* A buffer made, its size: the oldest entry gives way when all are taken. Main thread. */
static void note_buffer(void *made, int width, int height) {
  if (made == NULL) return;
  forget_buffer(made); /* a proxy freed unseen (at a disconnect), its address given again */
  buffers[next_buffer].buffer = made;
  buffers[next_buffer].width = width, buffers[next_buffer].height = height;
  next_buffer = (next_buffer + 1) % BUFFERS;
}

/* The window in the toplevel: its geometry, else its attached buffer's extent in surface
 * coordinates; a width of 0 when neither is known. Main thread. */
static void window_box(int box[4]) {
  memcpy(box, geometry, sizeof(geometry));
  if (geometry[2] > 0 && geometry[3] > 0) return;
  for (int i = 0; i < BUFFERS && attached != NULL; i++)
    if (buffers[i].buffer == attached) {
      int scale = buffer_scale > 0 ? buffer_scale : 1;
      box[0] = box[1] = 0, box[2] = buffers[i].width / scale, box[3] = buffers[i].height / scale;
    }
}

/* The window is gone (its surface destroyed, or the connection): the next one gets the HUD,
 * and nothing of this one's size is taken for it. Main thread. */
static void forget_toplevel(void) {
  toplevel = toplevel_xdg = attached = NULL;
  buffer_scale = 1;
}

/* The real definition of name in libwayland-client, looked up once into cache. */
static void *real_symbol(_Atomic(void *) *cache, const char *name) {
  void *found = atomic_load_explicit(cache, memory_order_relaxed);
  if (found == NULL) {
    found = lagscope__preload_real_symbol(name, "libwayland-client.so.0");
    atomic_store_explicit(cache, found, memory_order_relaxed);
  }
  return found;
}
#define REAL(type, name)                                                                     \
  static _Atomic(void *) name##_cache;                                                       \
  type real = (type)real_symbol(&name##_cache, #name);

/* The toplevel's commit: the HUD's subsurface placed with it, and a frame when no toolkit's
 * hook counts them. Main thread, before the commit is sent. */
static void toplevel_commit(void) {
  int box[4];
  window_box(box);
  lagscope__hud_wl_before_commit(toplevel, box[0], box[1], box[2], box[3]);
  lagscope__preload_wayland_frame();
}

/* A request to the toplevel's wl_surface (directly or through a wrapper): what it attaches
 * and at which scale (its size), its commit, its end. Main thread, before it is sent. */
static void toplevel_request(uint32_t opcode, const union wl_argument *args) {
  if (opcode == SURFACE_ATTACH) attached = args[0].o;
  if (opcode == SURFACE_SET_SCALE) buffer_scale = args[0].i;
  if (opcode == SURFACE_COMMIT) toplevel_commit();
  if (opcode == SURFACE_DESTROY) {
    lagscope__hud_wl_parent_gone();
    forget_toplevel();
  }
}

HOOK void *wl_proxy_marshal_flags(void *proxy, uint32_t opcode, const struct wl_interface *iface,
                                  uint32_t version, uint32_t flags, ...) {
  REAL(marshal_array_fn, wl_proxy_marshal_array_flags)
  const struct wl_interface *own = interface_of(proxy);
  union wl_argument args[MAX_ARGS];
  memset(args, 0, sizeof(args));
  if (own != NULL && opcode < (uint32_t)own->method_count) {
    va_list ap;
    va_start(ap, flags);
    read_args(own->methods[opcode].signature, ap, args);
    va_end(ap);
  }
  int main_thread = own != NULL && on_main_thread();
  if (main_thread && toplevel != NULL && unwrapped(proxy) == toplevel &&
      strcmp(own->name, "wl_surface") == 0)
    toplevel_request(opcode, args);
  if (main_thread && opcode == BUFFER_DESTROY && strcmp(own->name, "wl_buffer") == 0)
    forget_buffer(proxy);
  if (main_thread && strcmp(own->name, "xdg_surface") == 0) {
    if (opcode == XDG_SURFACE_DESTROY)
      for (int i = 0; i < XDG_SURFACES; i++)
        if (xdg_surfaces[i].xdg == proxy) xdg_surfaces[i].xdg = xdg_surfaces[i].surface = NULL;
    if (opcode == XDG_SURFACE_DESTROY && proxy == toplevel_xdg) toplevel_xdg = NULL;
    if (opcode == XDG_SURFACE_GET_TOPLEVEL && toplevel == NULL) {
      for (int i = 0; i < XDG_SURFACES; i++)
        if (xdg_surfaces[i].xdg == proxy) toplevel = xdg_surfaces[i].surface, toplevel_xdg = proxy;
    } else if (opcode == XDG_SURFACE_SET_GEOMETRY && proxy == toplevel_xdg) {
      for (int i = 0; i < 4; i++) geometry[i] = args[i].i;
    }
  }
  void *made = real != NULL ? real(proxy, opcode, iface, version, flags, args) : NULL;
  if (main_thread && opcode == WM_BASE_GET_XDG_SURFACE && strcmp(own->name, "xdg_wm_base") == 0)
    note_xdg_surface(made, args[1].o);
  if (main_thread && opcode == SHM_POOL_CREATE_BUFFER && strcmp(own->name, "wl_shm_pool") == 0)
    note_buffer(made, args[2].i, args[3].i); /* new_id, offset, width, height, ... */
  if (main_thread && opcode == DMABUF_PARAMS_CREATE_IMMED &&
      strcmp(own->name, "zwp_linux_buffer_params_v1") == 0)
    note_buffer(made, args[1].i, args[2].i); /* new_id, width, height, ... */
  return made;
}

typedef void *(*create_wrapper_fn)(void *proxy);
typedef void (*wrapper_destroy_fn)(void *wrapper);

/* A wrapper of the main thread's is noted, so that requests through it reach the toplevel. */
HOOK void *wl_proxy_create_wrapper(void *proxy) {
  REAL(create_wrapper_fn, wl_proxy_create_wrapper)
  void *wrapper = real != NULL ? real(proxy) : NULL;
  for (int i = 0; i < WRAPPERS && wrapper != NULL && on_main_thread(); i++)
    if (wrappers[i].wrapper == NULL || wrappers[i].wrapper == wrapper) {
      wrappers[i].wrapper = wrapper, wrappers[i].wrapped = proxy;
      break;
    }
  return wrapper;
}

HOOK void wl_proxy_wrapper_destroy(void *wrapper) {
  REAL(wrapper_destroy_fn, wl_proxy_wrapper_destroy)
  for (int i = 0; i < WRAPPERS && on_main_thread(); i++)
    if (wrappers[i].wrapper == wrapper) wrappers[i].wrapper = wrappers[i].wrapped = NULL;
  if (real != NULL) real(wrapper);
}

typedef void *(*connect_fn)(const char *name);
typedef void *(*connect_fd_fn)(int fd);
typedef void (*disconnect_fn)(void *display);
typedef int (*dispatch_fn)(void *display);

HOOK void *wl_display_connect(const char *name) {
  REAL(connect_fn, wl_display_connect)
  void *display = real != NULL ? real(name) : NULL;
  if (display != NULL && on_main_thread() && lagscope__preload_wayland_hud_wanted())
    lagscope__hud_wl_connected(display);
  return display;
}

HOOK void *wl_display_connect_to_fd(int fd) {
  REAL(connect_fd_fn, wl_display_connect_to_fd)
  void *display = real != NULL ? real(fd) : NULL;
  if (display != NULL && on_main_thread() && lagscope__preload_wayland_hud_wanted())
    lagscope__hud_wl_connected(display);
  return display;
}

/* lagscope's objects on this display go first, and its thread stops using it. */
HOOK void wl_display_disconnect(void *display) {
  REAL(disconnect_fn, wl_display_disconnect)
  lagscope__hud_wl_disconnecting(display);
  if (on_main_thread()) {
    forget_toplevel();
    memset(buffers, 0, sizeof(buffers));
    memset(wrappers, 0, sizeof(wrappers));
  }
  if (real != NULL) real(display);
}

/* A plain client's loop (weston's simple clients): blocks until events come, a wait for input. */
HOOK int wl_display_dispatch(void *display) {
  REAL(dispatch_fn, wl_display_dispatch)
  int main_thread = on_main_thread();
  if (main_thread) lagscope__preload_wayland_wait(1);
  int rc = real != NULL ? real(display) : -1;
  if (main_thread) lagscope__preload_wayland_wait(0);
  return rc;
}
