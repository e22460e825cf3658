/* The HUD inside an SDL_Renderer program's own frame (Chocolate Doom, SDL's testsprite2): a
 * streaming texture of the preload's own, copied to the HUD's corner just before the
 * program's SDL_RenderPresent, every bit of renderer state it touches saved and restored. */
#ifndef LAGSCOPE_ATTACH_SDL_HUD_H
#define LAGSCOPE_ATTACH_SDL_HUD_H

#include <stdint.h>

/* Draws the latest HUD image into renderer's back buffer at the image's corner. Main thread,
 * before the real present. The HUD goes to one renderer only, the first one it sees; where
 * that renderer cannot take it, says why once on stderr and never tries it again. Takes no
 * lock; SDL allocates the texture once (and again when the image's size changes). */
void lagscope__sdl_hud_draw(void *renderer);

/* renderer is being destroyed, or was just created (a new one at a dead one's address): the
 * texture goes with the old one and is never touched again. Any thread; lock-free. */
void lagscope__sdl_hud_forget(void *renderer);

/* window is being destroyed (with it, in some SDL versions, its renderer). Main thread. */
void lagscope__sdl_hud_window_gone(void *window);

/* A window was created with flags: a Vulkan window is said once to get no HUD. Main thread. */
void lagscope__sdl_hud_window_made(void *window, uint32_t flags);

#endif
