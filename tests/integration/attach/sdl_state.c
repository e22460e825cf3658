/* An SDL_Renderer program that knows nothing of lagscope, for lagscope-run's HUD test: it sets
 * parts of its renderer's state once and relies on them in every frame, so that a HUD which
 * did not put them back would change its next frame. The window's view (a fractional scale, a
 * viewport, a clip rect) is set once, before the loop; a texture target stays set across each
 * present, its clip rect set only when it became the target. Each frame: red into the target's
 * clip, then on the window a grey clear, blue over the clipped viewport, the target copied
 * over the viewport; the target set again with its clip, and the present. The frame is the
 * same every time (a still picture), until SDL_QUIT (SIGTERM).
 *
 * Usage: sdl_state [software] [frames N] (the software renderer; else SDL's default; with
 * frames, N frames presented, then it returns from main at once, as a timed benchmark ends). */
#include <SDL.h>
#include <stdlib.h>
#include <string.h>

static const SDL_Rect target_clip = {40, 30, 80, 60};

static void set_colour(SDL_Renderer *r, Uint8 red, Uint8 green, Uint8 blue) {
  SDL_SetRenderDrawColor(r, red, green, blue, 255);
}

/* The target becomes the renderer's target again, with its clip (SDL resets a target's view
 * when it is set). */
static void to_target(SDL_Renderer *r, SDL_Texture *target) {
  SDL_SetRenderTarget(r, target);
  SDL_RenderSetClipRect(r, &target_clip);
}

static void draw_frame(SDL_Renderer *r, SDL_Texture *target) {
  set_colour(r, 220, 30, 30);
  SDL_RenderFillRect(r, NULL); /* the target's clip only, if it is still set */
  SDL_SetRenderTarget(r, NULL);
  set_colour(r, 90, 90, 90);
  SDL_RenderClear(r); /* the whole window: a clear ignores viewport and clip */
  set_colour(r, 30, 30, 220);
  SDL_RenderFillRect(r, NULL); /* the viewport, clipped, at the scale */
  SDL_RenderCopy(r, target, NULL, NULL);
  to_target(r, target);
  SDL_RenderPresent(r);
}

int main(int argc, char **argv) {
  int software = argc > 1 && strcmp(argv[1], "software") == 0;
  long frames = -1; /* until SDL_QUIT */
  for (int i = 1; i + 1 < argc; i++)
    if (strcmp(argv[i], "frames") == 0) frames = strtol(argv[i + 1], NULL, 10);
  if (SDL_Init(SDL_INIT_VIDEO) != 0) return 2;
  SDL_Window *window = SDL_CreateWindow("sdl_state", 0, 0, 400, 300, 0);
  Uint32 flags = software ? SDL_RENDERER_SOFTWARE : 0;
  SDL_Renderer *r = window ? SDL_CreateRenderer(window, -1, flags) : NULL;
  SDL_Texture *target = r ? SDL_CreateTexture(r, SDL_PIXELFORMAT_ARGB8888,
                                              SDL_TEXTUREACCESS_TARGET, 160, 120)
                          : NULL;
  if (target == NULL) {
    SDL_Log("sdl_state: %s", SDL_GetError());
    return 2;
  }
  SDL_RenderSetScale(r, 1.5f, 1.5f);
  const SDL_Rect viewport = {20, 30, 200, 140}, clip = {10, 10, 170, 110};
  SDL_RenderSetViewport(r, &viewport);
  SDL_RenderSetClipRect(r, &clip);
  SDL_SetRenderTarget(r, target);
  set_colour(r, 30, 160, 30);
  SDL_RenderClear(r); /* the target green, once */
  to_target(r, target);
  for (int done = 0; !done;) {
    SDL_Event e;
    while (SDL_PollEvent(&e)) done |= e.type == SDL_QUIT;
    if (frames == 0) break;
    draw_frame(r, target);
    if (frames > 0) frames--;
    SDL_Delay(10);
  }
  SDL_DestroyRenderer(r);
  SDL_DestroyWindow(window);
  SDL_Quit();
  return 0;
}
