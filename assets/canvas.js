/*
 * Canvas helpers shared by the charts and the flame graph: the palette, read from the
 * stylesheet's custom properties, and a canvas sized to its box at the screen's pixel ratio.
 */
export const colors = {};
/* Chart colours come from the stylesheet's custom properties, so the palette lives in one
 * place. */
export function readColors() {
  const style = getComputedStyle(document.documentElement);
  for (const name of ['text', 'muted', 'grid', 'accent', 'good', 'warn', 'bad', 'hang', 'panel', 'mem', 'cpu']) {
    colors[name] = style.getPropertyValue('--c-' + name).trim() || '#888';
  }
}

/* Sizes a canvas's backing store to its CSS box at the screen's pixel ratio; returns the 2D
 * context scaled so that drawing is in CSS pixels, or null when it is not laid out. */
export function prepareCanvas(canvas, cssHeight) {
  const ratio = window.devicePixelRatio || 1;
  const width = canvas.clientWidth;
  const height = cssHeight || canvas.clientHeight;
  if (!width || !height) return null;
  if (canvas.width !== Math.round(width * ratio) || canvas.height !== Math.round(height * ratio)) {
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(height * ratio);
  }
  const ctx = canvas.getContext('2d');
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.clearRect(0, 0, width, height);
  return { ctx, width, height };
}
