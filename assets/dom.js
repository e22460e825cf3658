/*
 * Small DOM helpers: elements made with their text (never innerHTML: every string from the
 * API reaches the page as text or an attribute), look-ups by id, the toast.
 */
/* Makes an element with a class and text; children may be nodes or strings. */
export function el(tag, className, ...children) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(typeof child === 'string' || typeof child === 'number' ? String(child) : child);
  }
  return node;
}

export function byId(id) {
  return document.getElementById(id);
}

export function setText(id, text) {
  const node = byId(id);
  if (node.textContent !== text) node.textContent = text;
}

let toastTimer = 0;
export function toast(text) {
  const node = byId('toast');
  node.textContent = text;
  node.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { node.hidden = true; }, 6000);
}

/* One label and its value in a summary list (<dl>). */
export function summaryItem(label, value) {
  return el('div', 'summary-item', el('dt', null, label), el('dd', null, value));
}
