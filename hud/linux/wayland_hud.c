/* The HUD on Wayland (see wayland_hud.h).
 *
 * Objects: lagscope's own registry, wl_compositor, wl_subcompositor and wl_shm, its surface, its
 * subsurface and its buffers, all on its own wl_event_queue: the program's dispatch of its
 * default queue never sees one of their events, and no request of lagscope's ever goes through
 * the program's proxies but one: the toplevel wl_surface named as the subsurface's parent.
 * The thread reads the display's socket only through libwayland's prepare_read_queue /
 * read_events, which share reading with the program's own thread: events for the program are
 * queued for it, never dispatched here.
 *
 * libwayland-client's ABI is written out below (its structs wl_message, wl_interface and
 * union wl_argument, and the opcodes of the core protocol's requests, all frozen since 1.0), so
 * that building needs no Wayland headers and nothing of libwayland is loaded into a program
 * that did not load it itself: its functions are looked up in the process (dlsym). */
#define _GNU_SOURCE /* memfd_create */
#include "wayland_hud.h"
#include "wayland_abi.h"

#include "hud.h" /* lagscope__hud_hold */
#include "internal.h"
#include "lagscope.h"

#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#define PERIOD_MS 250 /* at most 4 redraws a second: the badge counts tenths of seconds at most */
#define MARGIN 8      /* points between the window's corner and the HUD */
#define STACK_BYTES (256 * 1024)
#define SLOTS 2 /* buffers: one the compositor may hold, one to draw into */

typedef void *proxy;
#define DESTROY 1u /* WL_MARSHAL_FLAG_DESTROY */
enum { DISPLAY_GET_REGISTRY = 1, REGISTRY_BIND = 0 };
enum { COMPOSITOR_CREATE_SURFACE = 0, COMPOSITOR_CREATE_REGION = 1 };
enum { SURFACE_DESTROY = 0, SURFACE_ATTACH = 1, SURFACE_DAMAGE = 2, SURFACE_SET_INPUT_REGION = 5,
       SURFACE_COMMIT = 6 };
enum { REGION_DESTROY = 0, SUBCOMPOSITOR_GET_SUBSURFACE = 1 };
enum { SUBSURFACE_DESTROY = 0, SUBSURFACE_SET_POSITION = 1, SUBSURFACE_SET_DESYNC = 5 };
enum { SHM_CREATE_POOL = 0, POOL_CREATE_BUFFER = 0, POOL_DESTROY = 1, BUFFER_DESTROY = 0 };
#define SHM_ARGB8888 0u

/* The functions, from the program's libwayland-client. */
static struct {
  proxy (*marshal)(proxy p, uint32_t opcode, const struct wl_interface *iface, uint32_t version,
                   uint32_t flags, union wl_argument *args);
  void *(*create_queue)(void *display);
  void (*queue_destroy)(void *queue);
  proxy (*create_wrapper)(proxy p);
  void (*wrapper_destroy)(proxy p);
  void (*set_queue)(proxy p, void *queue);
  int (*add_listener)(proxy p, void (**listener)(void), void *data);
  void (*proxy_destroy)(proxy p);
  uint32_t (*version)(proxy p);
  int (*prepare_read_queue)(void *display, void *queue);
  int (*read_events)(void *display);
  void (*cancel_read)(void *display);
  int (*dispatch_queue_pending)(void *display, void *queue);
  int (*roundtrip_queue)(void *display, void *queue);
  int (*flush)(void *display);
  int (*get_fd)(void *display);
  const struct wl_interface *registry_if, *compositor_if, *subcompositor_if, *surface_if,
      *subsurface_if, *region_if, *shm_if, *pool_if, *buffer_if;
} wl;

/* 1 when every function and interface was found: in the program's libwayland-client, which
 * may not be in the global scope (Qt loads it with its platform plugin, RTLD_LOCAL), hence
 * through a handle of it (RTLD_NOLOAD: nothing is loaded; the handle kept, it stays loaded). */
static int find_libwayland(void) {
  void *lib = dlopen("libwayland-client.so.0", RTLD_LAZY | RTLD_NOLOAD);
  if (lib == NULL) lib = RTLD_DEFAULT;
#define FIND(field, name) *(void **)&wl.field = dlsym(lib, name);
  FIND(marshal, "wl_proxy_marshal_array_flags")
  FIND(create_queue, "wl_display_create_queue")
  FIND(queue_destroy, "wl_event_queue_destroy")
  FIND(create_wrapper, "wl_proxy_create_wrapper")
  FIND(wrapper_destroy, "wl_proxy_wrapper_destroy")
  FIND(set_queue, "wl_proxy_set_queue")
  FIND(add_listener, "wl_proxy_add_listener")
  FIND(proxy_destroy, "wl_proxy_destroy")
  FIND(version, "wl_proxy_get_version")
  FIND(prepare_read_queue, "wl_display_prepare_read_queue")
  FIND(read_events, "wl_display_read_events")
  FIND(cancel_read, "wl_display_cancel_read")
  FIND(dispatch_queue_pending, "wl_display_dispatch_queue_pending")
  FIND(roundtrip_queue, "wl_display_roundtrip_queue")
  FIND(flush, "wl_display_flush")
  FIND(get_fd, "wl_display_get_fd")
  FIND(registry_if, "wl_registry_interface")
  FIND(compositor_if, "wl_compositor_interface")
  FIND(subcompositor_if, "wl_subcompositor_interface")
  FIND(surface_if, "wl_surface_interface")
  FIND(subsurface_if, "wl_subsurface_interface")
  FIND(region_if, "wl_region_interface")
  FIND(shm_if, "wl_shm_interface")
  FIND(pool_if, "wl_shm_pool_interface")
  FIND(buffer_if, "wl_buffer_interface")
#undef FIND
  void *const *all = (void *const *)&wl;
  for (size_t i = 0; i < sizeof(wl) / sizeof(void *); i++)
    if (all[i] == NULL) return 0;
  return 1;
}

/* A request on p that makes no object (or destroys p: flags DESTROY). */
static void request(proxy p, uint32_t opcode, uint32_t flags, union wl_argument *args) {
  wl.marshal(p, opcode, NULL, wl.version(p), flags, args);
}

/* A request on p that makes an object of iface (its new_id is args[new_at]). */
static proxy make(proxy p, uint32_t opcode, const struct wl_interface *iface, uint32_t version,
                  union wl_argument *args) {
  return wl.marshal(p, opcode, iface, version, 0, args);
}

/* ---- the state: one HUD per process ---- */

typedef struct slot {
  proxy buffer;
  void *data;
  size_t size;
  int width, height, busy; /* busy: attached, not yet released by the compositor */
} slot;

static struct {
  pthread_mutex_t lock; /* started, placed and the objects' birth and death */
  int started;          /* under lock: the thread was started (once) */
  _Atomic int started_flag; /* the same, for lagscope__hud_wl_showing without the lock */
  _Atomic int ready;    /* the thread made the HUD's surface: it may be placed */
  _Atomic int placed;   /* the subsurface exists (made by the main thread) */
  _Atomic int stopping;
  _Atomic int failed;   /* no HUD after all: no wl_subcompositor, or the connection broke */
  _Atomic int in_child; /* a child forked without exec: the thread and objects are the parent's */
  pthread_t thread;
  int wake_fd;
  void *display, *queue;
  proxy display_wrapper, registry, compositor, subcompositor, shm, surface, subsurface;
  uint32_t compositor_version;
  int x, y;         /* the subsurface's position last set */
  int hud_w, hud_h; /* the size of the image last committed (the thread's) */
  _Atomic int shown_w, shown_h;
  slot slots[SLOTS];
} hud = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake_fd = -1};

/* ---- the registry: lagscope's own globals ---- */

static void on_global(void *data, proxy registry, uint32_t name, const char *iface,
                      uint32_t version) {
  (void)data;
  union wl_argument a[4] = {{.u = name}, {.s = iface}, {.u = 1}, {.o = NULL}};
  if (strcmp(iface, "wl_compositor") == 0 && hud.compositor == NULL) {
    hud.compositor_version = version < 4 ? version : 4; /* 4: damage_buffer */
    a[2].u = hud.compositor_version;
    hud.compositor = make(registry, REGISTRY_BIND, wl.compositor_if, a[2].u, a);
  } else if (strcmp(iface, "wl_subcompositor") == 0 && hud.subcompositor == NULL) {
    hud.subcompositor = make(registry, REGISTRY_BIND, wl.subcompositor_if, 1, a);
  } else if (strcmp(iface, "wl_shm") == 0 && hud.shm == NULL) {
    hud.shm = make(registry, REGISTRY_BIND, wl.shm_if, 1, a);
  }
}

static void on_global_remove(void *data, proxy registry, uint32_t name) {
  (void)data, (void)registry, (void)name;
}

static void (*registry_listener[2])(void) = {(void (*)(void))on_global,
                                             (void (*)(void))on_global_remove};

/* The compositor is done with a buffer: it may be drawn into again. */
static void on_release(void *data, proxy buffer) {
  (void)buffer;
  ((slot *)data)->busy = 0;
}

static void (*buffer_listener[1])(void) = {(void (*)(void))on_release};

/* Binds the globals and makes the surface with an empty input region (clicks go through to
 * the program); 0 with why said when the compositor lacks one. The thread. */
static int make_surface(char *why, size_t why_size) {
  hud.queue = wl.create_queue(hud.display);
  hud.display_wrapper = hud.queue != NULL ? wl.create_wrapper(hud.display) : NULL;
  if (hud.display_wrapper == NULL) {
    snprintf(why, why_size, "no event queue of its own (out of memory)");
    return 0;
  }
  wl.set_queue(hud.display_wrapper, hud.queue);
  union wl_argument none[1] = {{.o = NULL}};
  hud.registry = make(hud.display_wrapper, DISPLAY_GET_REGISTRY, wl.registry_if,
                      wl.version(hud.display_wrapper), none);
  if (hud.registry == NULL) return snprintf(why, why_size, "no registry"), 0;
  wl.add_listener(hud.registry, registry_listener, NULL);
  if (wl.roundtrip_queue(hud.display, hud.queue) < 0)
    return snprintf(why, why_size, "the connection failed"), 0;
  if (hud.subcompositor == NULL)
    return snprintf(why, why_size, "the compositor has no wl_subcompositor"), 0;
  if (hud.compositor == NULL || hud.shm == NULL)
    return snprintf(why, why_size, "the compositor has no wl_compositor or wl_shm"), 0;
  hud.surface = make(hud.compositor, COMPOSITOR_CREATE_SURFACE, wl.surface_if,
                     hud.compositor_version, none);
  proxy region = make(hud.compositor, COMPOSITOR_CREATE_REGION, wl.region_if, 1, none);
  if (hud.surface == NULL || region == NULL) return snprintf(why, why_size, "out of memory"), 0;
  union wl_argument r[1] = {{.o = region}};
  request(hud.surface, SURFACE_SET_INPUT_REGION, 0, r); /* nothing added: empty */
  request(region, REGION_DESTROY, DESTROY, NULL);
  return 1;
}

/* ---- the buffers ---- */

static void slot_free(slot *s) {
  if (s->buffer != NULL) request(s->buffer, BUFFER_DESTROY, DESTROY, NULL);
  if (s->data != NULL) munmap(s->data, s->size);
  memset(s, 0, sizeof(*s));
}

/* A wl_buffer of width x height ARGB8888 over a memfd of lagscope's (the descriptor is closed
 * once the compositor has it); 0 when it could not be made. */
static int slot_make(slot *s, int width, int height) {
  size_t size = (size_t)width * 4 * (size_t)height;
  int fd = memfd_create("lagscope-hud", MFD_CLOEXEC);
  if (fd < 0) return 0;
  void *data = ftruncate(fd, (off_t)size) == 0
                   ? mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                   : MAP_FAILED;
  if (data == MAP_FAILED) {
    close(fd);
    return 0;
  }
  union wl_argument p[3] = {{.o = NULL}, {.h = fd}, {.i = (int32_t)size}};
  proxy pool = make(hud.shm, SHM_CREATE_POOL, wl.pool_if, 1, p);
  close(fd); /* sent (libwayland dups it for the message) */
  union wl_argument b[6] = {{.o = NULL}, {.i = 0}, {.i = width}, {.i = height},
                            {.i = width * 4}, {.u = SHM_ARGB8888}};
  proxy buffer = pool != NULL ? make(pool, POOL_CREATE_BUFFER, wl.buffer_if, 1, b) : NULL;
  if (pool != NULL) request(pool, POOL_DESTROY, DESTROY, NULL); /* the buffer keeps the memory */
  if (buffer == NULL) {
    munmap(data, size);
    return 0;
  }
  *s = (slot){buffer, data, size, width, height, 0};
  wl.add_listener(buffer, buffer_listener, s);
  return 1;
}

/* A buffer the compositor does not hold, of the image's size; NULL when none can be had. */
static slot *free_slot(int width, int height) {
  for (int i = 0; i < SLOTS; i++) {
    slot *s = &hud.slots[i];
    if (s->busy) continue;
    if (s->buffer != NULL && (s->width != width || s->height != height)) slot_free(s);
    if (s->buffer == NULL && !slot_make(s, width, height)) return NULL;
    return s;
  }
  return NULL;
}

/* The latest image into a free buffer, committed on the HUD's surface (desynchronized: shown
 * without the parent's commit). Nothing when the image did not change. */
static void show_latest(uint64_t *shown) {
  lagscope_hud_image image;
  if (lagscope__hud_hold(&image) != LAGSCOPE_OK) return;
  slot *s = NULL;
  if (image.sequence != *shown && image.pixels != NULL && image.width > 0 && image.height > 0)
    s = free_slot(image.width, image.height);
  if (s != NULL)
    for (int y = 0; y < image.height; y++)
      memcpy((char *)s->data + (size_t)y * (size_t)image.width * 4,
             (const char *)image.pixels + (size_t)y * (size_t)image.stride,
             (size_t)image.width * 4);
  lagscope__hud_release();
  if (s == NULL) return;
  *shown = image.sequence;
  atomic_store(&hud.shown_w, (int)(image.width / (image.scale > 0 ? image.scale : 1)));
  atomic_store(&hud.shown_h, (int)(image.height / (image.scale > 0 ? image.scale : 1)));
  union wl_argument at[3] = {{.o = s->buffer}, {.i = 0}, {.i = 0}};
  request(hud.surface, SURFACE_ATTACH, 0, at);
  union wl_argument d[4] = {{.i = 0}, {.i = 0}, {.i = INT32_MAX}, {.i = INT32_MAX}};
  request(hud.surface, SURFACE_DAMAGE, 0, d);
  request(hud.surface, SURFACE_COMMIT, 0, NULL);
  s->busy = 1;
}

/* ---- the thread ---- */

/* Waits up to PERIOD_MS (or a wake) for the socket to have something, then reads and
 * dispatches lagscope's queue; 0 when the connection failed. lagscope is a prepared reader only
 * from prepare_read_queue to its read or cancel, microseconds apart: libwayland makes a thread's
 * read_events wait for every prepared reader, and the program's main thread must never wait for
 * lagscope's. Events for the program's queues are queued for it by whichever thread reads. */
static int wait_period(void) {
  wl.flush(hud.display);
  struct pollfd fds[2] = {{wl.get_fd(hud.display), POLLIN, 0}, {hud.wake_fd, POLLIN, 0}};
  poll(fds, 2, PERIOD_MS);
  if (fds[1].revents & POLLIN) {
    uint64_t count;
    if (read(hud.wake_fd, &count, sizeof(count)) < 0) { /* drained; nothing to do */
    }
  }
  while (wl.prepare_read_queue(hud.display, hud.queue) != 0)
    if (wl.dispatch_queue_pending(hud.display, hud.queue) < 0) return 0;
  struct pollfd now = {wl.get_fd(hud.display), POLLIN, 0};
  if (poll(&now, 1, 0) > 0 && (now.revents & POLLIN)) {
    if (wl.read_events(hud.display) < 0) return 0;
  } else {
    wl.cancel_read(hud.display);
  }
  return wl.dispatch_queue_pending(hud.display, hud.queue) >= 0;
}

/* Destroys lagscope's objects (the thread, or the disconnecting main thread after the join). */
static void destroy_objects(void) {
  for (int i = 0; i < SLOTS; i++) slot_free(&hud.slots[i]);
  if (hud.subsurface != NULL) request(hud.subsurface, SUBSURFACE_DESTROY, DESTROY, NULL);
  if (hud.surface != NULL) request(hud.surface, SURFACE_DESTROY, DESTROY, NULL);
  proxy *own[] = {&hud.compositor, &hud.subcompositor, &hud.shm, &hud.registry};
  for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
    if (*own[i] != NULL) wl.proxy_destroy(*own[i]);
  if (hud.display_wrapper != NULL) wl.wrapper_destroy(hud.display_wrapper);
  if (hud.display != NULL) wl.flush(hud.display);
  if (hud.queue != NULL) wl.queue_destroy(hud.queue);
  hud.subsurface = hud.surface = hud.compositor = hud.subcompositor = hud.shm = NULL;
  hud.registry = hud.display_wrapper = hud.queue = NULL;
}

static void *thread_main(void *unused) {
  (void)unused;
  lagscope__thread_adopt();
  lagscope__thread_name_self("lagscope-wl");
  char why[160];
  if (!make_surface(why, sizeof(why))) {
    atomic_store(&hud.failed, 1);
    lagscope__publish_error(LAGSCOPE_ENOTSUP, LAGSCOPE__HUD_WL_FAILED ": %s", why);
  } else {
    atomic_store(&hud.ready, 1);
    uint64_t shown = 0;
    while (!atomic_load(&hud.stopping) && wait_period())
      if (atomic_load(&hud.placed)) show_latest(&shown);
    if (!atomic_load(&hud.stopping)) atomic_store(&hud.failed, 1);
    if (!atomic_load(&hud.stopping))
      lagscope__publish_error(LAGSCOPE_ESYS, LAGSCOPE__HUD_WL_FAILED ": the connection to the "
                              "compositor failed: the HUD is gone, lagscope goes on without it");
  }
  lagscope__thread_disown();
  return NULL;
}

void lagscope__hud_wl_forget_in_child(void) {
  atomic_store(&hud.in_child, 1);
  atomic_store(&hud.ready, 0);
}

void lagscope__hud_wl_connected(void *display) {
  if (display == NULL || !lagscope_is_running() || atomic_load(&hud.in_child)) return;
  pthread_mutex_lock(&hud.lock);
  if (!hud.started && find_libwayland()) {
    hud.display = display;
    hud.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    hud.started = hud.wake_fd >= 0 &&
                  lagscope__thread_create(&hud.thread, STACK_BYTES, thread_main, NULL) ==
                      LAGSCOPE_OK;
    atomic_store(&hud.started_flag, hud.started);
  }
  pthread_mutex_unlock(&hud.lock);
}

int lagscope__hud_wl_showing(void) {
  return atomic_load(&hud.started_flag) && !atomic_load(&hud.failed) &&
         !atomic_load(&hud.stopping) && !atomic_load(&hud.in_child);
}

/* Where the HUD goes: the image's corner of the window geometry (the whole surface's when the
 * program set none, which it then is), MARGIN in. */
static void corner_position(lagscope_hud_corner corner, int x, int y, int width, int height,
                            int *out_x, int *out_y) {
  int w = atomic_load(&hud.shown_w), h = atomic_load(&hud.shown_h);
  int right = corner == LAGSCOPE_HUD_TOP_RIGHT || corner == LAGSCOPE_HUD_BOTTOM_RIGHT;
  int bottom = corner == LAGSCOPE_HUD_BOTTOM_LEFT || corner == LAGSCOPE_HUD_BOTTOM_RIGHT;
  *out_x = right && width > w ? x + width - w - MARGIN : x + MARGIN;
  *out_y = bottom && height > h ? y + height - h - MARGIN : y + MARGIN;
}

void lagscope__hud_wl_before_commit(void *toplevel, int x, int y, int width, int height) {
  if (!atomic_load(&hud.ready) || atomic_load(&hud.stopping)) return;
  lagscope_hud_image image = {0};
  if (lagscope__hud_hold(&image) == LAGSCOPE_OK) lagscope__hud_release(); /* its corner */
  int px, py;
  corner_position(image.corner, x, y, width, height, &px, &py);
  pthread_mutex_lock(&hud.lock);
  if (hud.subsurface == NULL && !atomic_load(&hud.placed)) {
    union wl_argument a[3] = {{.o = NULL}, {.o = hud.surface}, {.o = toplevel}};
    hud.subsurface = make(hud.subcompositor, SUBCOMPOSITOR_GET_SUBSURFACE, wl.subsurface_if, 1, a);
    if (hud.subsurface != NULL) request(hud.subsurface, SUBSURFACE_SET_DESYNC, 0, NULL);
    hud.x = hud.y = INT32_MIN;
  }
  if (hud.subsurface != NULL && (px != hud.x || py != hud.y)) {
    union wl_argument p[2] = {{.i = px}, {.i = py}};
    request(hud.subsurface, SUBSURFACE_SET_POSITION, 0, p);
    hud.x = px, hud.y = py;
  }
  int first = hud.subsurface != NULL && !atomic_load(&hud.placed);
  if (first) atomic_store(&hud.placed, 1);
  pthread_mutex_unlock(&hud.lock);
  if (first) { /* the first image, without waiting for the period */
    uint64_t one = 1;
    if (write(hud.wake_fd, &one, sizeof(one)) < 0) { /* a full eventfd wakes the thread anyway */
    }
  }
}

void lagscope__hud_wl_parent_gone(void) {
  if (atomic_load(&hud.in_child)) return;
  pthread_mutex_lock(&hud.lock);
  if (hud.subsurface != NULL && !atomic_load(&hud.stopping)) {
    atomic_store(&hud.placed, 0); /* the thread draws no more until the next is placed */
    request(hud.subsurface, SUBSURFACE_DESTROY, DESTROY, NULL);
    hud.subsurface = NULL;
  }
  pthread_mutex_unlock(&hud.lock);
}

void lagscope__hud_wl_disconnecting(void *display) {
  if (atomic_load(&hud.in_child)) return; /* its lock may have been held at the fork */
  pthread_mutex_lock(&hud.lock);
  int ours = hud.started && hud.display == display && !atomic_load(&hud.stopping);
  if (ours) atomic_store(&hud.stopping, 1);
  pthread_mutex_unlock(&hud.lock);
  if (!ours) return;
  uint64_t one = 1;
  if (write(hud.wake_fd, &one, sizeof(one)) < 0) { /* woken anyway within PERIOD_MS */
  }
  pthread_join(hud.thread, NULL);
  destroy_objects();
  close(hud.wake_fd);
  hud.wake_fd = -1;
}
