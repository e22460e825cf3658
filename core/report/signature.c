/* A hang's or a hitch's signature: the same code path gives the same short id across
 * occurrences, runs, builds that did not touch it, and machines, so that the viewer, the HUD,
 * lagscope-compare and /metrics can group them. It is a hash of the cause's kind and the names
 * of the app's own frames of the heaviest stack (docs/hang-report.md, "The signature"): names,
 * never addresses (ASLR moves them) nor lines (an edit above moves them), never lagscope's
 * frames. Read from the stack's JSON as written (report_json.c), in place: no allocation. */
#include "internal.h"

#include <stdio.h>
#include <string.h>

/* GCC's clone suffixes (foo.constprop.0, foo.isra.0, foo.part.1, foo.cold, foo.lto_priv.0):
 * an unrelated edit can make or number them, so the name stops at the first. */
static void strip_clone_suffix(char *name) {
  static const char *const suffixes[] = {".constprop", ".isra", ".part", ".cold", ".lto_priv",
                                         ".localalias", ".clone"};
  for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
    char *at = strstr(name, suffixes[i]);
    if (at != NULL && at != name) *at = '\0';
  }
}

static int has_code(const char *stack, lagscope__json_span frame, const char *code) {
  lagscope__json_span v = lagscope__json_member_span(stack, frame, "code");
  size_t n = strlen(code);
  return v.end - v.start == n + 2 && memcmp(stack + v.start + 1, code, n) == 0;
}

/* Adds a frame's name unless it repeats the last one (a recursion's depth varies by input). */
static void add_name(lagscope__signature *s, const char *name) {
  if (name[0] == '\0' || s->entry_count >= LAGSCOPE__SIGNATURE_ENTRIES) return;
  if (s->entry_count > 0 && strcmp(s->entries[s->entry_count - 1], name) == 0) return;
  snprintf(s->entries[s->entry_count++], LAGSCOPE__SIGNATURE_NAME, "%s", name);
}

/* An app's frame as the source has it, innermost first (docs/hang-report.md, "The
 * signature"): the function its call named when a tail call took that function's frame away
 * (tail_called, unless it is the frame above), the functions inlined at the address, then its
 * own. So -O0 and -O2 builds of one stall give one list. */
static void add_frame_names(lagscope__signature *s, const char *stack, lagscope__json_span frame,
                            const char *above, char *name) {
  const char *text = stack + frame.start;
  size_t len = frame.end - frame.start;
  if (lagscope__json_member_text(text, len, "tail_called", name, LAGSCOPE__SIGNATURE_NAME)) {
    strip_clone_suffix(name);
    if (strcmp(name, above) != 0) add_name(s, name);
  }
  lagscope__json_span list = lagscope__json_member_span(stack, frame, "inlined"), element;
  size_t at = 0;
  while (list.end > list.start &&
         lagscope__json_next_element(stack + list.start, list.end - list.start, &at, &element)) {
    if (lagscope__json_string_text(stack + list.start + element.start, element.end - element.start,
                                   name, LAGSCOPE__SIGNATURE_NAME))
      add_name(s, name);
  }
}

/* The frames whose code is `code` (NULL: any but lagscope's that has a function name),
 * innermost first, until max names. */
static void collect(lagscope__signature *s, const char *stack, size_t n, const char *code,
                    uint32_t max) {
  lagscope__json_span element;
  size_t at = 0;
  char above[LAGSCOPE__SIGNATURE_NAME] = ""; /* the function of the frame above, any code's */
  while (s->entry_count < max && lagscope__json_next_element(stack, n, &at, &element)) {
    const char *frame = stack + element.start;
    size_t len = element.end - element.start;
    char name[LAGSCOPE__SIGNATURE_NAME], own[LAGSCOPE__SIGNATURE_NAME] = "";
    if (lagscope__json_member_text(frame, len, "function", own, sizeof(own))) strip_clone_suffix(own);
    if (code != NULL) {
      if (has_code(stack, element, code)) add_frame_names(s, stack, element, above, name);
      if (!has_code(stack, element, code) || !lagscope__report_entry_name(frame, len, name, sizeof(name))) {
        memcpy(above, own, sizeof(above));
        continue;
      }
    } else if (has_code(stack, element, "lagscope") || own[0] == '\0') {
      memcpy(above, own, sizeof(above));
      continue;
    } else {
      snprintf(name, sizeof(name), "%s", own);
    }
    memcpy(above, own, sizeof(above));
    strip_clone_suffix(name);
    add_name(s, name);
  }
}

/* FNV-1a, 64 bits: small, no table, the same on every machine. */
static uint64_t fnv1a(uint64_t h, const char *text, size_t n) {
  for (size_t i = 0; i < n; i++) {
    h ^= (unsigned char)text[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

void lagscope__signature_of(const char *kind, const char *stack, lagscope__signature *out) {
  memset(out, 0, sizeof(*out));
  snprintf(out->kind, sizeof(out->kind), "%s", kind != NULL && kind[0] != '\0' ? kind : "unknown");
  size_t n = stack != NULL ? strlen(stack) : 0;
  collect(out, stack, n, "app", LAGSCOPE__SIGNATURE_ENTRIES);
  /* None of the app's frames (a stall wholly in the system's code, a report from before
   * "code"): the innermost named frames tell it apart from other stalls of its kind. */
  if (out->entry_count == 0) collect(out, stack, n, NULL, LAGSCOPE__SIGNATURE_FALLBACK_ENTRIES);
  uint64_t h = fnv1a(0xcbf29ce484222325ull, out->kind, strlen(out->kind) + 1);
  for (uint32_t i = 0; i < out->entry_count; i++)
    h = fnv1a(h, out->entries[i], strlen(out->entries[i]) + 1); /* the NUL separates names */
  snprintf(out->id, sizeof(out->id), "%016llx", (unsigned long long)h);
}

void lagscope__signature_write(lagscope__json_writer *w, const lagscope__signature *s) {
  lagscope__jw_string(w, "signature", s->id);
  lagscope__jw_begin_array(w, "signature_frames");
  for (uint32_t i = 0; i < s->entry_count; i++) lagscope__jw_string(w, NULL, s->entries[i]);
  lagscope__jw_end_array(w);
}
