/* The overlay where lagscope-run was built without XCB's headers (x11_overlay.h): the HUD only
 * in GL and SDL frames; a program that opens an X display is told once why it has no overlay. */
#include "x11_overlay.h"

#include "preload.h"

#include <stdatomic.h>
#include <stdio.h>

static atomic_int mode, said;

void lagscope__overlay_set_mode(lagscope__hud_mode m) { atomic_store(&mode, (int)m); }

void lagscope__overlay_app_connected(const char *display) {
  (void)display;
  if (atomic_load(&mode) == LAGSCOPE__HUD_FRAME || !lagscope__preload_hud_wanted() ||
      atomic_exchange(&said, 1))
    return;
  fprintf(stderr, "lagscope-preload: no HUD overlay: built without libxcb, libxcb-xfixes and "
                  "libxcb-shape (Debian: libxcb1-dev libxcb-xfixes0-dev libxcb-shape0-dev)\n");
}

void lagscope__overlay_saw_window(unsigned long window) { (void)window; }
void lagscope__overlay_wake(void) {}
int lagscope__overlay_frame_may_draw(void) { return atomic_load(&mode) != LAGSCOPE__HUD_OVERLAY; }
void lagscope__overlay_stop(void) {}
void lagscope__overlay_forget_in_child(void) {}
