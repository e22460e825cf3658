/* libwayland-client's ABI, as wayland-util.h has it (frozen since 1.0): what the preload's hooks
 * (attach/hooks_wayland.c) and the Wayland HUD (wayland_hud.c) read of the program's own
 * libwayland, which lagscope looks up at run time rather than links: no header of Wayland's is
 * needed to build it. A proxy begins with its wl_object, whose first member is its interface. */
#ifndef LAGSCOPE_HUD_WAYLAND_ABI_H
#define LAGSCOPE_HUD_WAYLAND_ABI_H

#include <stdint.h>

struct wl_message {
  const char *name, *signature;
  const void **types;
};
struct wl_interface {
  const char *name;
  int version, method_count;
  const struct wl_message *methods;
  int event_count;
  const struct wl_message *events;
};
union wl_argument {
  int32_t i;
  uint32_t u;
  const char *s;
  void *o;
  uint32_t n;
  void *a;
  int32_t h;
};

#endif
