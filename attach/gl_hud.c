/* The HUD inside a GL program's own frame (see gl_hud.h).
 *
 * One textured quad drawn with a program of its own: GLSL 1.40 on desktop GL 3.1 and later
 * (core profiles included), 1.10 before, ES 1.00 on OpenGL ES. The image is cairo's
 * premultiplied ARGB32, uploaded as bytes and read back as .bgra, blended premultiplied. What
 * the draw changes is read first and put back after: the program, the texture unit and its
 * binding (and sampler), the array buffer, the vertex array (or vertex attribute 0 where
 * there is none), the unpack state, the draw framebuffer, the viewport, blending, the colour
 * mask, the tests and modes that would hide or alter the quad.
 *
 * The GL names here are the specification's constants and the functions are found through the
 * API's GetProcAddress, so no GL header or library is needed to build this. */
#include "gl_hud.h"

#include "lagscope.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

typedef unsigned GLenum;
typedef int GLint;
typedef unsigned GLuint;
typedef int GLsizei;
typedef unsigned char GLboolean;
typedef float GLfloat;
typedef ptrdiff_t GLsizeiptr;
typedef char GLchar;

#define GL_ONE 1
#define GL_TRIANGLE_STRIP 0x0005
#define GL_ONE_MINUS_SRC_ALPHA 0x0303
#define GL_FRONT_AND_BACK 0x0408
#define GL_CULL_FACE 0x0B44
#define GL_POLYGON_MODE 0x0B40
#define GL_DEPTH_TEST 0x0B71
#define GL_STENCIL_TEST 0x0B90
#define GL_VIEWPORT 0x0BA2
#define GL_ALPHA_TEST 0x0BC0
#define GL_BLEND 0x0BE2
#define GL_COLOR_LOGIC_OP 0x0BF2
#define GL_SCISSOR_TEST 0x0C11
#define GL_COLOR_WRITEMASK 0x0C23
#define GL_UNPACK_ROW_LENGTH 0x0CF2
#define GL_UNPACK_SKIP_ROWS 0x0CF3
#define GL_UNPACK_SKIP_PIXELS 0x0CF4
#define GL_UNPACK_ALIGNMENT 0x0CF5
#define GL_TEXTURE_2D 0x0DE1
#define GL_UNSIGNED_BYTE 0x1401
#define GL_FLOAT 0x1406
#define GL_RGBA 0x1908
#define GL_VERSION 0x1F02
#define GL_FILL 0x1B02
#define GL_NEAREST 0x2600
#define GL_TEXTURE_MAG_FILTER 0x2800
#define GL_TEXTURE_MIN_FILTER 0x2801
#define GL_TEXTURE_WRAP_S 0x2802
#define GL_TEXTURE_WRAP_T 0x2803
#define GL_FUNC_ADD 0x8006
#define GL_BLEND_EQUATION_RGB 0x8009
#define GL_TEXTURE_BINDING_2D 0x8069
#define GL_BLEND_DST_RGB 0x80C8
#define GL_BLEND_SRC_RGB 0x80C9
#define GL_BLEND_DST_ALPHA 0x80CA
#define GL_BLEND_SRC_ALPHA 0x80CB
#define GL_CLAMP_TO_EDGE 0x812F
#define GL_TEXTURE0 0x84C0
#define GL_ACTIVE_TEXTURE 0x84E0
#define GL_VERTEX_ARRAY_BINDING 0x85B5
#define GL_VERTEX_ATTRIB_ARRAY_ENABLED 0x8622
#define GL_VERTEX_ATTRIB_ARRAY_SIZE 0x8623
#define GL_VERTEX_ATTRIB_ARRAY_STRIDE 0x8624
#define GL_VERTEX_ATTRIB_ARRAY_TYPE 0x8625
#define GL_VERTEX_ATTRIB_ARRAY_POINTER 0x8645
#define GL_BLEND_EQUATION_ALPHA 0x883D
#define GL_VERTEX_ATTRIB_ARRAY_NORMALIZED 0x886A
#define GL_ARRAY_BUFFER 0x8892
#define GL_ARRAY_BUFFER_BINDING 0x8894
#define GL_VERTEX_ATTRIB_ARRAY_BUFFER_BINDING 0x889F
#define GL_STATIC_DRAW 0x88E4
#define GL_PIXEL_UNPACK_BUFFER 0x88EC
#define GL_PIXEL_UNPACK_BUFFER_BINDING 0x88EF
#define GL_SAMPLER_BINDING 0x8919
#define GL_FRAGMENT_SHADER 0x8B30
#define GL_VERTEX_SHADER 0x8B31
#define GL_COMPILE_STATUS 0x8B81
#define GL_LINK_STATUS 0x8B82
#define GL_CURRENT_PROGRAM 0x8B8D
#define GL_RASTERIZER_DISCARD 0x8C89
#define GL_DRAW_FRAMEBUFFER_BINDING 0x8CA6
#define GL_DRAW_FRAMEBUFFER 0x8CA9
#define GL_FRAMEBUFFER 0x8D40
#define GL_FRAMEBUFFER_SRGB 0x8DB9

/* The functions: the first list every context has (GL 2.0, ES 2.0); the second only some. */
#define GL_REQUIRED(X)                                                                        \
  X(const unsigned char *, GetString, (GLenum name))                                          \
  X(void, GetIntegerv, (GLenum name, GLint *out))                                             \
  X(void, GetBooleanv, (GLenum name, GLboolean *out))                                         \
  X(GLboolean, IsEnabled, (GLenum cap))                                                       \
  X(void, Enable, (GLenum cap))                                                               \
  X(void, Disable, (GLenum cap))                                                              \
  X(void, BlendFuncSeparate, (GLenum sr, GLenum dr, GLenum sa, GLenum da))                    \
  X(void, BlendEquationSeparate, (GLenum rgb, GLenum alpha))                                  \
  X(void, ColorMask, (GLboolean r, GLboolean g, GLboolean b, GLboolean a))                    \
  X(void, Viewport, (GLint x, GLint y, GLsizei w, GLsizei h))                                 \
  X(void, ActiveTexture, (GLenum unit))                                                       \
  X(void, BindTexture, (GLenum target, GLuint texture))                                       \
  X(void, GenTextures, (GLsizei n, GLuint *out))                                              \
  X(void, TexParameteri, (GLenum target, GLenum name, GLint value))                           \
  X(void, TexImage2D, (GLenum t, GLint l, GLint i, GLsizei w, GLsizei h, GLint b, GLenum f,   \
                       GLenum type, const void *p))                                           \
  X(void, TexSubImage2D, (GLenum t, GLint l, GLint x, GLint y, GLsizei w, GLsizei h, GLenum f, \
                          GLenum type, const void *p))                                        \
  X(void, PixelStorei, (GLenum name, GLint value))                                            \
  X(GLuint, CreateShader, (GLenum type))                                                      \
  X(void, ShaderSource, (GLuint s, GLsizei n, const GLchar *const *src, const GLint *len))    \
  X(void, CompileShader, (GLuint s))                                                          \
  X(void, GetShaderiv, (GLuint s, GLenum name, GLint *out))                                   \
  X(void, DeleteShader, (GLuint s))                                                           \
  X(GLuint, CreateProgram, (void))                                                            \
  X(void, AttachShader, (GLuint p, GLuint s))                                                 \
  X(void, BindAttribLocation, (GLuint p, GLuint index, const GLchar *name))                   \
  X(void, LinkProgram, (GLuint p))                                                            \
  X(void, GetProgramiv, (GLuint p, GLenum name, GLint *out))                                  \
  X(void, UseProgram, (GLuint p))                                                             \
  X(GLint, GetUniformLocation, (GLuint p, const GLchar *name))                                \
  X(void, Uniform1i, (GLint location, GLint value))                                           \
  X(void, Uniform4f, (GLint location, GLfloat a, GLfloat b, GLfloat c, GLfloat d))            \
  X(void, GenBuffers, (GLsizei n, GLuint *out))                                               \
  X(void, BindBuffer, (GLenum target, GLuint buffer))                                         \
  X(void, BufferData, (GLenum target, GLsizeiptr size, const void *data, GLenum usage))       \
  X(void, VertexAttribPointer, (GLuint i, GLint size, GLenum type, GLboolean norm,            \
                                GLsizei stride, const void *p))                               \
  X(void, EnableVertexAttribArray, (GLuint i))                                                \
  X(void, DisableVertexAttribArray, (GLuint i))                                               \
  X(void, GetVertexAttribiv, (GLuint i, GLenum name, GLint *out))                             \
  X(void, GetVertexAttribPointerv, (GLuint i, GLenum name, void **out))                       \
  X(void, DrawArrays, (GLenum mode, GLint first, GLsizei count))

#define GL_OPTIONAL(X)                                                                        \
  X(void, GenVertexArrays, (GLsizei n, GLuint *out))                                          \
  X(void, BindVertexArray, (GLuint vao))                                                      \
  X(void, BindSampler, (GLuint unit, GLuint sampler))                                         \
  X(void, BindFramebuffer, (GLenum target, GLuint fb))                                        \
  X(void, PolygonMode, (GLenum face, GLenum mode))

#define GL_MEMBER(ret, name, args) ret (*name) args;
typedef struct gl_api {
  GL_REQUIRED(GL_MEMBER)
  GL_OPTIONAL(GL_MEMBER)
} gl_api;

/* What the context is and has. */
typedef struct gl_kind {
  int es, major, minor, core;
  int has_vao, has_sampler, has_unpack_buffer, has_row_length, has_draw_framebuffer;
} gl_kind;

/* The one context the HUD draws into and what it made there. */
static struct {
  void *context; /* NULL: none yet, or it was destroyed */
  int failed;    /* setting it up failed: never again in this context */
  gl_api gl;
  gl_kind kind;
  GLuint program, texture, buffer, vertex_array;
  GLint rect_at, image_at;
  int texture_width, texture_height;
  uint64_t sequence;
} hud;

/* hud.context as other threads see it: a context destroyed anywhere clears it. */
static _Atomic(void *) owner;

/* Everything the draw changes, as it was. */
typedef struct gl_saved {
  GLint program, active_texture, texture, sampler, array_buffer, vertex_array, unpack_buffer;
  GLint draw_framebuffer, unpack_alignment, unpack_row_length, unpack_skip_rows, unpack_skip_pixels;
  GLint viewport[4], blend_src_rgb, blend_dst_rgb, blend_src_alpha, blend_dst_alpha;
  GLint blend_equation_rgb, blend_equation_alpha, polygon_mode[2];
  GLboolean color_mask[4];
  GLboolean blend, depth_test, stencil_test, scissor_test, cull_face, srgb, discard, alpha_test,
      logic_op;
  GLint attrib_enabled, attrib_size, attrib_type, attrib_normalized, attrib_stride, attrib_buffer;
  void *attrib_pointer;
} gl_saved;

/* ---- setting up --------------------------------------------------------------------------- */

static int load_api(gl_api *gl, lagscope__gl_proc_fn get_proc) {
  int complete = 1;
#define GL_LOAD_REQUIRED(ret, name, args)                          \
  *(void **)&gl->name = get_proc("gl" #name);                      \
  complete &= gl->name != NULL;
#define GL_LOAD_OPTIONAL(ret, name, args) *(void **)&gl->name = get_proc("gl" #name);
  GL_REQUIRED(GL_LOAD_REQUIRED)
  GL_OPTIONAL(GL_LOAD_OPTIONAL)
  return complete;
}

/* From GL_VERSION: "OpenGL ES 3.2 Mesa …" or "4.6 (Compatibility Profile) Mesa …". */
static void find_kind(const gl_api *gl, gl_kind *k) {
  memset(k, 0, sizeof(*k));
  const char *version = (const char *)gl->GetString(GL_VERSION);
  if (version == NULL) return;
  k->es = strncmp(version, "OpenGL ES", 9) == 0;
  const char *digits = version + strcspn(version, "0123456789");
  if (sscanf(digits, "%d.%d", &k->major, &k->minor) != 2) k->major = k->minor = 0;
  int at_least_3 = k->major >= 3;
  if (!k->es && (k->major > 3 || (k->major == 3 && k->minor >= 2))) {
    GLint mask = 0;
    gl->GetIntegerv(0x9126 /* GL_CONTEXT_PROFILE_MASK */, &mask);
    k->core = (mask & 1) != 0;
  }
  k->has_vao = at_least_3 && gl->GenVertexArrays != NULL && gl->BindVertexArray != NULL;
  k->has_sampler = gl->BindSampler != NULL &&
                   (k->es ? at_least_3 : (k->major > 3 || (k->major == 3 && k->minor >= 3)));
  k->has_unpack_buffer = k->es ? at_least_3 : (k->major > 2 || (k->major == 2 && k->minor >= 1));
  k->has_row_length = !k->es || at_least_3;
  k->has_draw_framebuffer = at_least_3 && gl->BindFramebuffer != NULL;
}

static const char *const vertex_140 =
    "#version 140\nin vec2 corner;\nuniform vec4 rect;\nout vec2 uv;\n"
    "void main() { uv = corner; gl_Position = vec4(mix(rect.xy, rect.zw, corner), 0.0, 1.0); }\n";
static const char *const fragment_140 =
    "#version 140\nin vec2 uv;\nuniform sampler2D image;\nout vec4 color;\n"
    "void main() { color = texture(image, uv).bgra; }\n";
static const char *const vertex_110 =
    "#version 110\nattribute vec2 corner;\nuniform vec4 rect;\nvarying vec2 uv;\n"
    "void main() { uv = corner; gl_Position = vec4(mix(rect.xy, rect.zw, corner), 0.0, 1.0); }\n";
static const char *const fragment_110 =
    "#version 110\nvarying vec2 uv;\nuniform sampler2D image;\n"
    "void main() { gl_FragColor = texture2D(image, uv).bgra; }\n";
static const char *const vertex_100 =
    "#version 100\nattribute vec2 corner;\nuniform vec4 rect;\nvarying vec2 uv;\n"
    "void main() { uv = corner; gl_Position = vec4(mix(rect.xy, rect.zw, corner), 0.0, 1.0); }\n";
static const char *const fragment_100 =
    "#version 100\nprecision mediump float;\nvarying vec2 uv;\nuniform sampler2D image;\n"
    "void main() { gl_FragColor = texture2D(image, uv).bgra; }\n";

static GLuint compile(const gl_api *gl, GLenum type, const char *source) {
  GLuint shader = gl->CreateShader(type);
  gl->ShaderSource(shader, 1, &source, NULL);
  gl->CompileShader(shader);
  GLint ok = 0;
  gl->GetShaderiv(shader, GL_COMPILE_STATUS, &ok);
  if (!ok) {
    gl->DeleteShader(shader);
    return 0;
  }
  return shader;
}

static GLuint make_program(const gl_api *gl, const gl_kind *k) {
  int glsl_140 = !k->es && (k->major > 3 || (k->major == 3 && k->minor >= 1));
  const char *vs = k->es ? vertex_100 : glsl_140 ? vertex_140 : vertex_110;
  const char *fs = k->es ? fragment_100 : glsl_140 ? fragment_140 : fragment_110;
  GLuint vertex = compile(gl, GL_VERTEX_SHADER, vs);
  GLuint fragment = vertex ? compile(gl, GL_FRAGMENT_SHADER, fs) : 0;
  if (fragment == 0) {
    if (vertex) gl->DeleteShader(vertex);
    return 0;
  }
  GLuint program = gl->CreateProgram();
  gl->AttachShader(program, vertex);
  gl->AttachShader(program, fragment);
  gl->BindAttribLocation(program, 0, "corner");
  gl->LinkProgram(program);
  gl->DeleteShader(vertex); /* kept alive by the program */
  gl->DeleteShader(fragment);
  GLint ok = 0;
  gl->GetProgramiv(program, GL_LINK_STATUS, &ok);
  return ok ? program : 0;
}

/* ---- saving and restoring the program's state ---------------------------------------------- */

static void save_state(const gl_api *gl, const gl_kind *k, gl_saved *s) {
  memset(s, 0, sizeof(*s));
  gl->GetIntegerv(GL_CURRENT_PROGRAM, &s->program);
  gl->GetIntegerv(GL_ACTIVE_TEXTURE, &s->active_texture);
  gl->ActiveTexture(GL_TEXTURE0);
  gl->GetIntegerv(GL_TEXTURE_BINDING_2D, &s->texture);
  if (k->has_sampler) gl->GetIntegerv(GL_SAMPLER_BINDING, &s->sampler);
  gl->GetIntegerv(GL_ARRAY_BUFFER_BINDING, &s->array_buffer);
  if (k->has_vao) {
    gl->GetIntegerv(GL_VERTEX_ARRAY_BINDING, &s->vertex_array);
  } else {
    gl->GetVertexAttribiv(0, GL_VERTEX_ATTRIB_ARRAY_ENABLED, &s->attrib_enabled);
    gl->GetVertexAttribiv(0, GL_VERTEX_ATTRIB_ARRAY_SIZE, &s->attrib_size);
    gl->GetVertexAttribiv(0, GL_VERTEX_ATTRIB_ARRAY_TYPE, &s->attrib_type);
    gl->GetVertexAttribiv(0, GL_VERTEX_ATTRIB_ARRAY_NORMALIZED, &s->attrib_normalized);
    gl->GetVertexAttribiv(0, GL_VERTEX_ATTRIB_ARRAY_STRIDE, &s->attrib_stride);
    gl->GetVertexAttribiv(0, GL_VERTEX_ATTRIB_ARRAY_BUFFER_BINDING, &s->attrib_buffer);
    gl->GetVertexAttribPointerv(0, GL_VERTEX_ATTRIB_ARRAY_POINTER, &s->attrib_pointer);
  }
  if (k->has_unpack_buffer) gl->GetIntegerv(GL_PIXEL_UNPACK_BUFFER_BINDING, &s->unpack_buffer);
  if (k->has_draw_framebuffer) gl->GetIntegerv(GL_DRAW_FRAMEBUFFER_BINDING, &s->draw_framebuffer);
  gl->GetIntegerv(GL_UNPACK_ALIGNMENT, &s->unpack_alignment);
  if (k->has_row_length) {
    gl->GetIntegerv(GL_UNPACK_ROW_LENGTH, &s->unpack_row_length);
    gl->GetIntegerv(GL_UNPACK_SKIP_ROWS, &s->unpack_skip_rows);
    gl->GetIntegerv(GL_UNPACK_SKIP_PIXELS, &s->unpack_skip_pixels);
  }
  gl->GetIntegerv(GL_VIEWPORT, s->viewport);
  gl->GetIntegerv(GL_BLEND_SRC_RGB, &s->blend_src_rgb);
  gl->GetIntegerv(GL_BLEND_DST_RGB, &s->blend_dst_rgb);
  gl->GetIntegerv(GL_BLEND_SRC_ALPHA, &s->blend_src_alpha);
  gl->GetIntegerv(GL_BLEND_DST_ALPHA, &s->blend_dst_alpha);
  gl->GetIntegerv(GL_BLEND_EQUATION_RGB, &s->blend_equation_rgb);
  gl->GetIntegerv(GL_BLEND_EQUATION_ALPHA, &s->blend_equation_alpha);
  gl->GetBooleanv(GL_COLOR_WRITEMASK, s->color_mask);
  if (!k->es && gl->PolygonMode != NULL) gl->GetIntegerv(GL_POLYGON_MODE, s->polygon_mode);
  s->blend = gl->IsEnabled(GL_BLEND);
  s->depth_test = gl->IsEnabled(GL_DEPTH_TEST);
  s->stencil_test = gl->IsEnabled(GL_STENCIL_TEST);
  s->scissor_test = gl->IsEnabled(GL_SCISSOR_TEST);
  s->cull_face = gl->IsEnabled(GL_CULL_FACE);
  if (!k->es && k->major >= 3) s->srgb = gl->IsEnabled(GL_FRAMEBUFFER_SRGB);
  if (k->major >= 3) s->discard = gl->IsEnabled(GL_RASTERIZER_DISCARD);
  if (!k->es && !k->core) s->alpha_test = gl->IsEnabled(GL_ALPHA_TEST);
  if (!k->es) s->logic_op = gl->IsEnabled(GL_COLOR_LOGIC_OP);
}

static void set_capability(const gl_api *gl, GLenum cap, GLboolean on) {
  if (on)
    gl->Enable(cap);
  else
    gl->Disable(cap);
}

static void restore_state(const gl_api *gl, const gl_kind *k, const gl_saved *s) {
  gl->UseProgram((GLuint)s->program);
  gl->BindTexture(GL_TEXTURE_2D, (GLuint)s->texture);
  if (k->has_sampler) gl->BindSampler(0, (GLuint)s->sampler);
  gl->ActiveTexture((GLenum)s->active_texture);
  if (k->has_vao) {
    gl->BindVertexArray((GLuint)s->vertex_array);
  } else {
    gl->BindBuffer(GL_ARRAY_BUFFER, (GLuint)s->attrib_buffer);
    gl->VertexAttribPointer(0, s->attrib_size, (GLenum)s->attrib_type,
                            (GLboolean)s->attrib_normalized, s->attrib_stride, s->attrib_pointer);
    if (s->attrib_enabled)
      gl->EnableVertexAttribArray(0);
    else
      gl->DisableVertexAttribArray(0);
  }
  gl->BindBuffer(GL_ARRAY_BUFFER, (GLuint)s->array_buffer);
  if (k->has_unpack_buffer) gl->BindBuffer(GL_PIXEL_UNPACK_BUFFER, (GLuint)s->unpack_buffer);
  if (k->has_draw_framebuffer) gl->BindFramebuffer(GL_DRAW_FRAMEBUFFER, (GLuint)s->draw_framebuffer);
  gl->PixelStorei(GL_UNPACK_ALIGNMENT, s->unpack_alignment);
  if (k->has_row_length) {
    gl->PixelStorei(GL_UNPACK_ROW_LENGTH, s->unpack_row_length);
    gl->PixelStorei(GL_UNPACK_SKIP_ROWS, s->unpack_skip_rows);
    gl->PixelStorei(GL_UNPACK_SKIP_PIXELS, s->unpack_skip_pixels);
  }
  gl->Viewport(s->viewport[0], s->viewport[1], s->viewport[2], s->viewport[3]);
  gl->BlendFuncSeparate((GLenum)s->blend_src_rgb, (GLenum)s->blend_dst_rgb,
                        (GLenum)s->blend_src_alpha, (GLenum)s->blend_dst_alpha);
  gl->BlendEquationSeparate((GLenum)s->blend_equation_rgb, (GLenum)s->blend_equation_alpha);
  gl->ColorMask(s->color_mask[0], s->color_mask[1], s->color_mask[2], s->color_mask[3]);
  if (!k->es && gl->PolygonMode != NULL) {
    /* GL_POLYGON_MODE gives front and back; core profiles keep one for both. */
    gl->PolygonMode(GL_FRONT_AND_BACK, (GLenum)s->polygon_mode[0]);
  }
  set_capability(gl, GL_BLEND, s->blend);
  set_capability(gl, GL_DEPTH_TEST, s->depth_test);
  set_capability(gl, GL_STENCIL_TEST, s->stencil_test);
  set_capability(gl, GL_SCISSOR_TEST, s->scissor_test);
  set_capability(gl, GL_CULL_FACE, s->cull_face);
  if (!k->es && k->major >= 3) set_capability(gl, GL_FRAMEBUFFER_SRGB, s->srgb);
  if (k->major >= 3) set_capability(gl, GL_RASTERIZER_DISCARD, s->discard);
  if (!k->es && !k->core) set_capability(gl, GL_ALPHA_TEST, s->alpha_test);
  if (!k->es) set_capability(gl, GL_COLOR_LOGIC_OP, s->logic_op);
}

/* ---- drawing -------------------------------------------------------------------------------- */

/* The objects, made once in the current context (its state saved around this). */
static int set_up(void) {
  const gl_api *gl = &hud.gl;
  hud.program = make_program(gl, &hud.kind);
  if (hud.program == 0) return 0;
  hud.rect_at = gl->GetUniformLocation(hud.program, "rect");
  hud.image_at = gl->GetUniformLocation(hud.program, "image");
  gl->GenTextures(1, &hud.texture);
  gl->BindTexture(GL_TEXTURE_2D, hud.texture);
  gl->TexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  gl->TexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  gl->TexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  gl->TexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  static const GLfloat corners[] = {0, 0, 1, 0, 0, 1, 1, 1};
  gl->GenBuffers(1, &hud.buffer);
  gl->BindBuffer(GL_ARRAY_BUFFER, hud.buffer);
  gl->BufferData(GL_ARRAY_BUFFER, sizeof(corners), corners, GL_STATIC_DRAW);
  if (hud.kind.has_vao) {
    gl->GenVertexArrays(1, &hud.vertex_array);
    gl->BindVertexArray(hud.vertex_array);
    gl->VertexAttribPointer(0, 2, GL_FLOAT, 0, 0, NULL);
    gl->EnableVertexAttribArray(0);
  }
  hud.texture_width = hud.texture_height = 0;
  hud.sequence = 0;
  return 1;
}

static void upload(const lagscope_hud_image *image) {
  const gl_api *gl = &hud.gl;
  gl->BindTexture(GL_TEXTURE_2D, hud.texture);
  if (hud.kind.has_unpack_buffer) gl->BindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
  gl->PixelStorei(GL_UNPACK_ALIGNMENT, 4);
  if (hud.kind.has_row_length) {
    gl->PixelStorei(GL_UNPACK_ROW_LENGTH, image->stride / 4);
    gl->PixelStorei(GL_UNPACK_SKIP_ROWS, 0);
    gl->PixelStorei(GL_UNPACK_SKIP_PIXELS, 0);
  }
  if (image->width != hud.texture_width || image->height != hud.texture_height) {
    gl->TexImage2D(GL_TEXTURE_2D, 0, GL_RGBA, image->width, image->height, 0, GL_RGBA,
                   GL_UNSIGNED_BYTE, image->pixels);
    hud.texture_width = image->width;
    hud.texture_height = image->height;
  } else {
    gl->TexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, image->width, image->height, GL_RGBA,
                      GL_UNSIGNED_BYTE, image->pixels);
  }
  hud.sequence = image->sequence;
}

/* The quad's corners in clip space: the image at its pixel size, 8 points from its corner. */
static void place(const lagscope_hud_image *image, int width, int height, GLfloat rect[4]) {
  float margin = 8 * image->scale;
  int right = image->corner == LAGSCOPE_HUD_TOP_RIGHT || image->corner == LAGSCOPE_HUD_BOTTOM_RIGHT;
  int bottom = image->corner == LAGSCOPE_HUD_BOTTOM_LEFT || image->corner == LAGSCOPE_HUD_BOTTOM_RIGHT;
  float left = right ? width - margin - image->width : margin;
  float top = bottom ? height - margin - image->height : margin;
  rect[0] = -1 + 2 * left / width;
  rect[1] = 1 - 2 * top / height;
  rect[2] = -1 + 2 * (left + image->width) / width;
  rect[3] = 1 - 2 * (top + image->height) / height;
}

static void draw(const lagscope_hud_image *image, int width, int height) {
  const gl_api *gl = &hud.gl;
  if (image->sequence != hud.sequence) upload(image);
  gl->BindTexture(GL_TEXTURE_2D, hud.texture);
  if (hud.kind.has_sampler) gl->BindSampler(0, 0);
  if (hud.kind.has_draw_framebuffer) gl->BindFramebuffer(GL_DRAW_FRAMEBUFFER, 0);
  gl->UseProgram(hud.program);
  GLfloat rect[4];
  place(image, width, height, rect);
  gl->Uniform4f(hud.rect_at, rect[0], rect[1], rect[2], rect[3]);
  gl->Uniform1i(hud.image_at, 0);
  if (hud.kind.has_vao) {
    gl->BindVertexArray(hud.vertex_array);
  } else {
    gl->BindBuffer(GL_ARRAY_BUFFER, hud.buffer);
    gl->VertexAttribPointer(0, 2, GL_FLOAT, 0, 0, NULL);
    gl->EnableVertexAttribArray(0);
  }
  gl->Viewport(0, 0, width, height);
  gl->Enable(GL_BLEND);
  gl->BlendFuncSeparate(GL_ONE, GL_ONE_MINUS_SRC_ALPHA, GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
  gl->BlendEquationSeparate(GL_FUNC_ADD, GL_FUNC_ADD);
  gl->ColorMask(1, 1, 1, 1);
  if (!hud.kind.es && gl->PolygonMode != NULL) gl->PolygonMode(GL_FRONT_AND_BACK, GL_FILL);
  gl->Disable(GL_DEPTH_TEST);
  gl->Disable(GL_STENCIL_TEST);
  gl->Disable(GL_SCISSOR_TEST);
  gl->Disable(GL_CULL_FACE);
  if (!hud.kind.es && hud.kind.major >= 3) gl->Disable(GL_FRAMEBUFFER_SRGB);
  if (hud.kind.major >= 3) gl->Disable(GL_RASTERIZER_DISCARD);
  if (!hud.kind.es && !hud.kind.core) gl->Disable(GL_ALPHA_TEST);
  if (!hud.kind.es) gl->Disable(GL_COLOR_LOGIC_OP);
  gl->DrawArrays(GL_TRIANGLE_STRIP, 0, 4);
}

void lagscope__gl_hud_draw(void *context, lagscope__gl_proc_fn get_proc, int width, int height) {
  if (context == NULL || width <= 0 || height <= 0) return;
  if (hud.context != NULL && atomic_load(&owner) != hud.context)
    memset(&hud, 0, sizeof(hud)); /* destroyed: its objects went with it */
  if (hud.context != NULL && hud.context != context) return; /* one context only */
  if (hud.context == context && hud.failed) return;
  lagscope_hud_image image;
  if (lagscope_hud_take(&image) != LAGSCOPE_OK || image.pixels == NULL || image.width <= 0 ||
      image.height <= 0 || image.stride < image.width * 4)
    return;
  int fresh = hud.context == NULL;
  if (fresh) {
    memset(&hud, 0, sizeof(hud));
    hud.context = context;
    atomic_store(&owner, context);
    if (!load_api(&hud.gl, get_proc)) {
      hud.failed = 1;
      return;
    }
    find_kind(&hud.gl, &hud.kind);
    if (hud.kind.major < 2 || (!hud.kind.has_row_length && image.stride != image.width * 4)) {
      hud.failed = 1;
      return;
    }
  }
  gl_saved saved;
  save_state(&hud.gl, &hud.kind, &saved);
  if (fresh && !set_up())
    hud.failed = 1;
  else
    draw(&image, width, height);
  restore_state(&hud.gl, &hud.kind, &saved);
}

void lagscope__gl_hud_forget(void *context) {
  void *expected = context;
  if (context != NULL) atomic_compare_exchange_strong(&owner, &expected, NULL);
}
