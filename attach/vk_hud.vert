// The HUD's one triangle (vk_blend.c), drawn with the viewport and scissor on the HUD's place:
// its three corners cover the viewport, whose every pixel the fragment shader then fills.
// scripts/vk-hud-spirv compiles it into attach/vk_hud_spirv.h.
#version 450

void main() {
  vec2 corner = vec2((gl_VertexIndex << 1) & 2, gl_VertexIndex & 2);
  gl_Position = vec4(corner * 2.0 - 1.0, 0.0, 1.0);
}
