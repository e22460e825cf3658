/* The HUD inside an SDL_Renderer program's own frame (see sdl_hud.h).
 *
 * One streaming ARGB8888 texture, filled from the HUD image (cairo's premultiplied ARGB32,
 * which is ARGB8888 in memory) and copied 8 points from its corner with a premultiplied blend
 * mode (one, one minus source alpha). A renderer that refuses custom blend modes (SDL's
 * software renderer) gets the pixels un-premultiplied and SDL_BLENDMODE_BLEND, which every
 * renderer has. Before the copy the renderer is put in its plain state (the window as target,
 * no logical size, scale 1, the whole viewport, no clip); after it, the program's state is put
 * back: the target, and for the window and for a texture target their viewport, clip rect and
 * scale, and the logical size. A copy does not use the draw colour or the draw blend mode, so
 * they are not touched.
 *
 * SDL's functions are found with dlsym in the libSDL2 the program loaded (never linked), and
 * written with plain C types, as in hooks.c. */
#define _GNU_SOURCE
#include "sdl_hud.h"

#include "internal.h" /* lagscope__log: once, where the HUD cannot be drawn */
#include "preload.h"

#include <stdatomic.h>
#include <string.h>

typedef struct sdl_rect {
  int x, y, w, h;
} sdl_rect;

/* SDL_RendererInfo's ABI (SDL_render.h): the name is all the HUD reads. */
typedef struct sdl_renderer_info {
  const char *name;
  uint32_t flags, num_texture_formats, texture_formats[16];
  int max_texture_width, max_texture_height;
} sdl_renderer_info;

#define SDL_PIXELFORMAT_ARGB8888 0x16362004u
#define SDL_TEXTUREACCESS_STREAMING 1
#define SDL_BLENDMODE_BLEND 1
#define SDL_BLENDOPERATION_ADD 1
#define SDL_BLENDFACTOR_ONE 2
#define SDL_BLENDFACTOR_ONE_MINUS_SRC_ALPHA 6
#define SDL_WINDOW_VULKAN 0x10000000u

#define SDL_CALLS(X)                                                                          \
  X(const char *, SDL_GetError, (void))                                                       \
  X(int, SDL_GetRendererInfo, (void *r, sdl_renderer_info *info))                             \
  X(int, SDL_GetRendererOutputSize, (void *r, int *w, int *h))                                \
  X(void *, SDL_GetRenderer, (void *window))                                                  \
  X(void *, SDL_CreateTexture, (void *r, uint32_t format, int access, int w, int h))         \
  X(void, SDL_DestroyTexture, (void *t))                                                      \
  X(int, SDL_SetTextureBlendMode, (void *t, int mode))                                        \
  X(int, SDL_ComposeCustomBlendMode, (int sc, int dc, int cop, int sa, int da, int aop))      \
  X(int, SDL_LockTexture, (void *t, const sdl_rect *rect, void **pixels, int *pitch))         \
  X(void, SDL_UnlockTexture, (void *t))                                                       \
  X(int, SDL_RenderCopy, (void *r, void *t, const sdl_rect *src, const sdl_rect *dst))        \
  X(void *, SDL_GetRenderTarget, (void *r))                                                   \
  X(int, SDL_SetRenderTarget, (void *r, void *t))                                             \
  X(void, SDL_RenderGetLogicalSize, (void *r, int *w, int *h))                                \
  X(int, SDL_RenderSetLogicalSize, (void *r, int w, int h))                                   \
  X(void, SDL_RenderGetScale, (void *r, float *x, float *y))                                  \
  X(int, SDL_RenderSetScale, (void *r, float x, float y))                                     \
  X(void, SDL_RenderGetViewport, (void *r, sdl_rect *rect))                                   \
  X(int, SDL_RenderSetViewport, (void *r, const sdl_rect *rect))                              \
  X(void, SDL_RenderGetClipRect, (void *r, sdl_rect *rect))                                   \
  X(int, SDL_RenderSetClipRect, (void *r, const sdl_rect *rect))                              \
  X(int, SDL_RenderIsClipEnabled, (void *r))

#define SDL_MEMBER(ret, name, args) ret(*name) args;
static struct {
  SDL_CALLS(SDL_MEMBER)
} sdl;

/* 0: not looked up yet; 1: every call found; -1: one missing (an SDL older than 2.0.6). */
static int api_state;

/* The one renderer the HUD draws into and what it made there. Main thread. */
static struct {
  void *renderer;     /* NULL: none yet, or it was destroyed */
  int failed;         /* it cannot show the HUD: said, never tried again */
  void *texture;      /* NULL until the first image */
  int width, height;  /* the texture's size */
  int straight_alpha; /* premultiplied blending refused: pixels un-premultiplied */
  uint64_t sequence;  /* the image in the texture */
} hud;

/* hud.renderer as other threads see it: a renderer destroyed anywhere clears it. */
static _Atomic(void *) owner;

/* A render target's view: what SDL keeps per target. */
typedef struct sdl_view {
  sdl_rect viewport, clip;
  int clipped;
  float scale_x, scale_y;
} sdl_view;

/* The program's state, as it was before the HUD. */
typedef struct sdl_saved {
  void *target;  /* NULL: the window */
  sdl_view own;  /* the texture target's view (target set only) */
  sdl_view main; /* the window's view */
  int logical_w, logical_h;
} sdl_saved;

/* ---- setting up ---------------------------------------------------------------------------- */

static int load_api(void) {
  if (api_state != 0) return api_state > 0;
  int complete = 1;
#define SDL_LOAD(ret, name, args)                                                   \
  *(void **)&sdl.name = lagscope__preload_real_symbol(#name, "libSDL2-2.0.so.0"); \
  complete &= sdl.name != NULL;
  SDL_CALLS(SDL_LOAD)
  api_state = complete ? 1 : -1;
  if (!complete)
    lagscope__log("no HUD in this program's SDL_Renderer frames: its libSDL2 lacks a call the "
                  "HUD needs (SDL 2.0.6 and later have them)");
  return complete;
}

/* This renderer cannot show the HUD: said once (why, with SDL's own words), never tried again. */
static void give_up(void *renderer, const char *what) {
  hud.failed = 1;
  sdl_renderer_info info;
  memset(&info, 0, sizeof(info));
  const char *error = sdl.SDL_GetError();
  if (sdl.SDL_GetRendererInfo(renderer, &info) != 0 || info.name == NULL) info.name = "?";
  lagscope__log("no HUD in this program's frames: SDL's %s renderer %s (%s)", info.name, what,
                error != NULL && error[0] != '\0' ? error : "no reason given");
}

/* The texture for an image of width x height, made (again when the size changed). */
static int make_texture(void *renderer, int width, int height) {
  if (hud.texture != NULL && hud.width == width && hud.height == height) return 1;
  if (hud.texture != NULL) sdl.SDL_DestroyTexture(hud.texture);
  hud.texture = sdl.SDL_CreateTexture(renderer, SDL_PIXELFORMAT_ARGB8888,
                                      SDL_TEXTUREACCESS_STREAMING, width, height);
  if (hud.texture == NULL) {
    give_up(renderer, "refused a streaming ARGB8888 texture");
    return 0;
  }
  hud.width = width;
  hud.height = height;
  hud.sequence = 0;
  int premultiplied = sdl.SDL_ComposeCustomBlendMode(
      SDL_BLENDFACTOR_ONE, SDL_BLENDFACTOR_ONE_MINUS_SRC_ALPHA, SDL_BLENDOPERATION_ADD,
      SDL_BLENDFACTOR_ONE, SDL_BLENDFACTOR_ONE_MINUS_SRC_ALPHA, SDL_BLENDOPERATION_ADD);
  hud.straight_alpha = sdl.SDL_SetTextureBlendMode(hud.texture, premultiplied) != 0;
  if (hud.straight_alpha && sdl.SDL_SetTextureBlendMode(hud.texture, SDL_BLENDMODE_BLEND) != 0) {
    give_up(renderer, "refused to blend a texture");
    return 0;
  }
  return 1;
}

/* ---- the pixels ------------------------------------------------------------------------------ */

/* A premultiplied pixel with its colour divided by its alpha again (SDL_BLENDMODE_BLEND
 * multiplies it back). */
static uint32_t straight(uint32_t p) {
  uint32_t a = p >> 24;
  if (a == 0 || a == 255) return a == 0 ? 0 : p;
  uint32_t r = ((p >> 16 & 0xff) * 255 + a / 2) / a, g = ((p >> 8 & 0xff) * 255 + a / 2) / a,
           b = ((p & 0xff) * 255 + a / 2) / a;
  return a << 24 | (r > 255 ? 255 : r) << 16 | (g > 255 ? 255 : g) << 8 | (b > 255 ? 255 : b);
}

/* The image into the texture (locked: SDL's own memory, no copy of ours). */
static int upload(void *renderer, const lagscope_hud_image *image) {
  void *pixels = NULL;
  int pitch = 0;
  if (sdl.SDL_LockTexture(hud.texture, NULL, &pixels, &pitch) != 0) {
    give_up(renderer, "could not lock the HUD's texture");
    return 0;
  }
  for (int y = 0; y < image->height; y++) {
    const uint32_t *from =
        (const uint32_t *)((const char *)image->pixels + (size_t)y * (size_t)image->stride);
    uint32_t *to = (uint32_t *)((char *)pixels + (size_t)y * (size_t)pitch);
    if (!hud.straight_alpha) {
      memcpy(to, from, (size_t)image->width * 4);
      continue;
    }
    for (int x = 0; x < image->width; x++) to[x] = straight(from[x]);
  }
  sdl.SDL_UnlockTexture(hud.texture);
  hud.sequence = image->sequence;
  return 1;
}

/* ---- saving and restoring the program's state ------------------------------------------------ */

static void save_view(void *renderer, sdl_view *v) {
  sdl.SDL_RenderGetViewport(renderer, &v->viewport);
  v->clipped = sdl.SDL_RenderIsClipEnabled(renderer) != 0;
  sdl.SDL_RenderGetClipRect(renderer, &v->clip);
  sdl.SDL_RenderGetScale(renderer, &v->scale_x, &v->scale_y);
}

static int same_rect(sdl_rect a, sdl_rect b) {
  return a.x == b.x && a.y == b.y && a.w == b.w && a.h == b.h;
}

/* Puts v back. SDL keeps the viewport and clip rect in pixels and gives them in the scale's
 * units, so each is set only where it differs from what is there now: a rect set again under a
 * fractional scale could come back a pixel off. */
static void restore_view(void *renderer, const sdl_view *v) {
  float scale_x, scale_y;
  sdl.SDL_RenderGetScale(renderer, &scale_x, &scale_y);
  if (scale_x != v->scale_x || scale_y != v->scale_y)
    sdl.SDL_RenderSetScale(renderer, v->scale_x, v->scale_y);
  sdl_rect now;
  sdl.SDL_RenderGetViewport(renderer, &now);
  if (!same_rect(now, v->viewport)) sdl.SDL_RenderSetViewport(renderer, &v->viewport);
  sdl.SDL_RenderGetClipRect(renderer, &now);
  int clipped = sdl.SDL_RenderIsClipEnabled(renderer) != 0;
  if (v->clipped && (!clipped || !same_rect(now, v->clip)))
    sdl.SDL_RenderSetClipRect(renderer, &v->clip);
  else if (!v->clipped && clipped)
    sdl.SDL_RenderSetClipRect(renderer, NULL);
}

/* Saves the program's state and leaves the renderer drawing on the window in pixels; 0 when
 * the window cannot be made the target (nothing changed then). */
static int save_and_clear(void *renderer, sdl_saved *s) {
  memset(s, 0, sizeof(*s));
  s->target = sdl.SDL_GetRenderTarget(renderer);
  if (s->target != NULL) {
    save_view(renderer, &s->own);
    if (sdl.SDL_SetRenderTarget(renderer, NULL) != 0) return 0;
  }
  save_view(renderer, &s->main);
  sdl.SDL_RenderGetLogicalSize(renderer, &s->logical_w, &s->logical_h);
  if (s->logical_w != 0 || s->logical_h != 0) sdl.SDL_RenderSetLogicalSize(renderer, 0, 0);
  sdl.SDL_RenderSetScale(renderer, 1.0f, 1.0f);
  sdl.SDL_RenderSetViewport(renderer, NULL);
  sdl.SDL_RenderSetClipRect(renderer, NULL);
  return 1;
}

/* The logical size first: setting it recomputes the viewport and scale as SDL did for the
 * program's frame, which restore_view then only corrects where the program set its own. */
static void restore(void *renderer, const sdl_saved *s) {
  if (s->logical_w != 0 || s->logical_h != 0)
    sdl.SDL_RenderSetLogicalSize(renderer, s->logical_w, s->logical_h);
  restore_view(renderer, &s->main);
  if (s->target == NULL) return;
  sdl.SDL_SetRenderTarget(renderer, s->target); /* SDL resets the texture's view: put it back */
  restore_view(renderer, &s->own);
}

/* ---- drawing --------------------------------------------------------------------------------- */

/* Where the image goes, in window pixels: 8 points from its corner. */
static sdl_rect place(const lagscope_hud_image *image, int width, int height) {
  int margin = (int)(8 * image->scale + 0.5f);
  int right =
      image->corner == LAGSCOPE_HUD_TOP_RIGHT || image->corner == LAGSCOPE_HUD_BOTTOM_RIGHT;
  int bottom =
      image->corner == LAGSCOPE_HUD_BOTTOM_LEFT || image->corner == LAGSCOPE_HUD_BOTTOM_RIGHT;
  sdl_rect r = {right ? width - margin - image->width : margin,
                bottom ? height - margin - image->height : margin, image->width, image->height};
  return r;
}

static void copy_to_corner(void *renderer, const lagscope_hud_image *image) {
  int width = 0, height = 0;
  if (sdl.SDL_GetRendererOutputSize(renderer, &width, &height) != 0 || width <= 0 || height <= 0)
    return;
  sdl_rect where = place(image, width, height);
  if (sdl.SDL_RenderCopy(renderer, hud.texture, NULL, &where) != 0)
    give_up(renderer, "could not draw the HUD's texture");
}

/* The latest image, if there is one worth drawing. */
static int take_image(lagscope_hud_image *image) {
  return lagscope_hud_take(image) == LAGSCOPE_OK && image->pixels != NULL && image->width > 0 &&
         image->height > 0 && image->stride >= image->width * 4;
}

/* The renderer the HUD may draw into now: renderer when it is the HUD's (or the first), and
 * has not failed. */
static int is_ours(void *renderer) {
  if (hud.renderer != NULL && atomic_load(&owner) != hud.renderer)
    memset(&hud, 0, sizeof(hud)); /* destroyed: its texture went with it */
  if (hud.renderer == NULL) {
    hud.renderer = renderer;
    atomic_store(&owner, renderer);
  }
  return hud.renderer == renderer && !hud.failed;
}

void lagscope__sdl_hud_draw(void *renderer) {
  if (renderer == NULL || !lagscope__preload_hud_wanted() || !load_api() || !is_ours(renderer))
    return;
  lagscope_hud_image image;
  if (!take_image(&image) || !make_texture(renderer, image.width, image.height)) return;
  if (image.sequence != hud.sequence && !upload(renderer, &image)) return;
  sdl_saved saved;
  if (!save_and_clear(renderer, &saved)) return;
  copy_to_corner(renderer, &image);
  restore(renderer, &saved);
}

void lagscope__sdl_hud_forget(void *renderer) {
  void *expected = renderer;
  if (renderer != NULL) atomic_compare_exchange_strong(&owner, &expected, NULL);
}

void lagscope__sdl_hud_window_gone(void *window) {
  if (window == NULL || api_state <= 0 || atomic_load(&owner) == NULL) return;
  lagscope__sdl_hud_forget(sdl.SDL_GetRenderer(window));
}

/* A preload with its Vulkan layer draws the HUD into Vulkan frames (vk_hud.c): nothing to say. */
#ifdef LAGSCOPE_PRELOAD_VK_LAYER
static const int vulkan_layer = 1;
#else
static const int vulkan_layer = 0;
#endif

void lagscope__sdl_hud_window_made(void *window, uint32_t flags) {
  static int said;
  if (vulkan_layer || window == NULL || !(flags & SDL_WINDOW_VULKAN) || said || !lagscope__preload_hud_wanted())
    return;
  said = 1;
  lagscope__log("no HUD in this program's frames: it draws with Vulkan, which lagscope-run's "
                "HUD does not reach yet");
}
