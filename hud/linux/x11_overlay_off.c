/* The overlay where the library was built without XCB's headers (x11_overlay.h): there is none.
 * lagscope_hud_overlay_x11 says so (LAGSCOPE_ENOTSUP), and so does lagscope-run's hook, whose
 * preload tells the program once why it has no overlay; its HUD is then in GL and SDL frames
 * only. */
#include "x11_overlay.h"

#include "lagscope.h"

#include <stdatomic.h>

static atomic_int mode;

void lagscope__hud_x11_set_mode(lagscope__hud_mode m) { atomic_store(&mode, (int)m); }
void lagscope__hud_x11_set_measure_refresh(int on) { (void)on; }

int lagscope_hud_overlay_x11(const char *display_name, unsigned long window) {
  (void)display_name, (void)window;
  return LAGSCOPE_ENOTSUP;
}

int lagscope__hud_x11_app_connected(const char *display, int may_draw) {
  (void)display, (void)may_draw;
  return atomic_load(&mode) == LAGSCOPE__HUD_FRAME ? LAGSCOPE_OK : LAGSCOPE_ENOTSUP;
}

void lagscope__hud_x11_saw_window(unsigned long window) { (void)window; }
int lagscope__hud_x11_frame_may_draw(void) { return atomic_load(&mode) != LAGSCOPE__HUD_OVERLAY; }
void lagscope__hud_x11_forget_in_child(void) {}
