// One pixel of the HUD over the program's frame (vk_blend.c): read from the HUD's buffer as
// cairo left it (premultiplied ARGB32, one word a pixel, rows of place.width), and blended by
// the pipeline (ONE, ONE_MINUS_SRC_ALPHA), so that the frame shows through the HUD's
// translucent parts. Into an sRGB image the colour is made linear first: the image encodes it
// again, and blends in linear light. scripts/vk-hud-spirv compiles it into attach/vk_hud_spirv.h.
#version 450

layout(std430, set = 0, binding = 0) readonly buffer Hud { uint pixels[]; };
layout(push_constant) uniform Place {
  ivec2 at;   // the HUD's top-left pixel in the image
  int width;  // the buffer's row, in pixels
  int srgb;   // 1: the image is sRGB
} place;
layout(location = 0) out vec4 color;

vec3 linear(vec3 c) {
  return mix(c / 12.92, pow((c + 0.055) / 1.055, vec3(2.4)), greaterThan(c, vec3(0.04045)));
}

void main() {
  ivec2 p = ivec2(gl_FragCoord.xy) - place.at;
  uint w = pixels[p.y * place.width + p.x];
  vec4 c = vec4(float((w >> 16) & 255u), float((w >> 8) & 255u), float(w & 255u),
                float(w >> 24)) / 255.0;
  if (place.srgb != 0 && c.a > 0.0) c.rgb = linear(c.rgb / c.a) * c.a;
  color = c;
}
