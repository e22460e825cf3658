/* Qt's frames, for lagscope-run: Qt 5 and Qt 6 widgets, on X11 (xcb) and on Wayland.
 *
 * Qt's loop runs on GLib's dispatcher, which hooks.c already watches (pings, hangs). A widget
 * window's frame is painted into its backing store and then shown by QBackingStore::flush, which
 * QtWidgets calls in QtGui (another library: the call goes through the PLT, where a preload
 * takes it). Both majors export it under the same C++ name, so one hook serves libQt5Gui.so.5
 * and libQt6Gui.so.6, whichever the program loaded. Qt Quick and QOpenGLWidget windows present
 * through EGL or glX, which hooks.c counts at the swap. Written with plain C types: the member
 * function's `this` first, then its references as pointers; nothing of Qt is loaded here. */
#define _GNU_SOURCE
#include "preload.h"

#include <stdatomic.h>

#define HOOK __attribute__((visibility("default")))

/* void QBackingStore::flush(const QRegion &region, QWindow *window, const QPoint &offset) */
typedef void (*flush_fn)(void *store, const void *region, void *window, const void *offset);

HOOK void _ZN13QBackingStore5flushERK7QRegionP7QWindowRK6QPoint(void *store, const void *region,
                                                                 void *window,
                                                                 const void *offset) {
  static _Atomic(flush_fn) cache;
  flush_fn real = atomic_load_explicit(&cache, memory_order_relaxed);
  if (real == NULL) {
    real = (flush_fn)lagscope__preload_real_symbol(
        "_ZN13QBackingStore5flushERK7QRegionP7QWindowRK6QPoint", NULL);
    atomic_store_explicit(&cache, real, memory_order_relaxed);
  }
  if (real != NULL) real(store, region, window, offset);
  lagscope__preload_frame_presented(LAGSCOPE__LOOP_GLIB); /* Qt's loop is GLib's */
}
