/* The HUD inside a GL program's own frame: drawn over the back buffer just before the
 * program's swap (glXSwapBuffers, eglSwapBuffers), every bit of GL state it touches saved and
 * restored, as MangoHud does. */
#ifndef LAGSCOPE_ATTACH_GL_HUD_H
#define LAGSCOPE_ATTACH_GL_HUD_H

/* The API's GetProcAddress (glXGetProcAddressARB, eglGetProcAddress). */
typedef void *(*lagscope__gl_proc_fn)(const char *name);

/* Draws the latest HUD image into context's back buffer (width x height pixels) at the image's
 * corner. Main thread, context current. The first call asks lagscope for the HUD (nothing is
 * drawn until an image exists); the HUD goes into one context only, the first one it sees.
 * Creates a texture, a buffer, a program (and a vertex array where there are some) in that
 * context once; takes no lock. */
void lagscope__gl_hud_draw(void *context, lagscope__gl_proc_fn get_proc, int width, int height);

/* context is being destroyed: its objects go with it. Any thread; lock-free. */
void lagscope__gl_hud_forget(void *context);

#endif
