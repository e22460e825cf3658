/* Made by cmake/consumers.cmake: the consumers this build plugs into the core. */
#include "internal.h"

extern const lagscope__consumer lagscope__hud_consumer;
extern const lagscope__consumer lagscope__viewer_consumer;
extern const lagscope__consumer lagscope__push_consumer;
extern const lagscope__consumer lagscope__hud_overlay_consumer;

const lagscope__consumer *const lagscope__consumers[] = {&lagscope__hud_consumer, &lagscope__viewer_consumer, &lagscope__push_consumer, &lagscope__hud_overlay_consumer, NULL};
