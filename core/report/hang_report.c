/* The public hang report: an immutable, reference-counted payload that hang_ended and
 * hang_recovered events carry. The JSON itself is built in report_json.c. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct lagscope_hang_report {
  char id[64];
  char path[512];
  uint64_t hang_id;
  char *json;                /* the whole report */
  char *heaviest_stack_json; /* a JSON array, innermost frame first */
  char *cause_json;          /* {"kind", "summary", "label"} */
  char label[LAGSCOPE__LABEL_MAX]; /* the cause's label, for the HUD; "" when none */
  char kind[16];                   /* the cause's kind; "" when none */
};

static void hang_report_destroy(void *payload) {
  lagscope_hang_report *r = payload;
  lagscope__dealloc(r->json); /* lagscope__report_json's */
  lagscope__dealloc(r->heaviest_stack_json);
  lagscope__dealloc(r->cause_json);
}

lagscope_hang_report *lagscope__hang_report_new(const char *id, uint64_t hang_id,
                                                const char *path, char *json,
                                                char *heaviest_stack_json) {
  lagscope_hang_report *r = lagscope__payload_new(sizeof(*r), hang_report_destroy);
  if (r == NULL) {
    lagscope__dealloc(json);
    lagscope__dealloc(heaviest_stack_json);
    return NULL;
  }
  snprintf(r->id, sizeof(r->id), "%s", id);
  snprintf(r->path, sizeof(r->path), "%s", path != NULL ? path : "");
  r->hang_id = hang_id;
  r->json = json;
  r->heaviest_stack_json = heaviest_stack_json;
  return r;
}

const char *lagscope_report_id(const lagscope_hang_report *report) { return report->id; }
const char *lagscope_report_path(const lagscope_hang_report *report) { return report->path; }
const char *lagscope_report_json(const lagscope_hang_report *report) {
  return report->json != NULL ? report->json : "";
}

const char *lagscope_report_cause(const lagscope_hang_report *report) {
  return report->cause_json != NULL ? report->cause_json : "";
}
const char *lagscope_report_heaviest_stack(const lagscope_hang_report *report) {
  return report->heaviest_stack_json != NULL ? report->heaviest_stack_json : "";
}

const char *lagscope__hang_report_heaviest_stack(const lagscope_hang_report *report) {
  return report->heaviest_stack_json;
}

void lagscope__hang_report_set_cause(lagscope_hang_report *report, char *cause_json) {
  lagscope__dealloc(report->cause_json);
  report->cause_json = cause_json;
  report->label[0] = report->kind[0] = '\0';
  if (cause_json == NULL) return;
  size_t n = strlen(cause_json); /* lagscope wrote it: read in place */
  if (!lagscope__json_member_text(cause_json, n, "label", report->label, sizeof(report->label)))
    report->label[0] = '\0';
  if (!lagscope__json_member_text(cause_json, n, "kind", report->kind, sizeof(report->kind)))
    report->kind[0] = '\0';
}

const char *lagscope__hang_report_label(const lagscope_hang_report *report) {
  return report->label;
}

const char *lagscope__hang_report_kind(const lagscope_hang_report *report) {
  return report->kind;
}

const char *lagscope__hang_report_cause(const lagscope_hang_report *report) {
  return report->cause_json;
}

/* s[v) copied, NUL-terminated, in lagscope's heap; NULL when empty or out of memory. A */
static char *span_copy(const char *s, lagscope__json_span v) {
  if (v.end <= v.start) return NULL;
  char *out = lagscope__alloc(v.end - v.start + 1);
  if (out == NULL) return NULL;
  memcpy(out, s + v.start, v.end - v.start);
  out[v.end - v.start] = '\0';
  return out;
}

/* The file's cause as a hang_ended's: {kind, summary, label}, its strings decoded and written
 * again (the file's other members, phases and lock chains, stay in the report). NULL when the
 * file has no cause object or out of memory. A */
#define CAUSE_TEXT_MAX 4096 /* bytes: a verdict's summary is 1 KiB at most */
static char *cause_of(const char *s, lagscope__json_span cause) {
  if (cause.end <= cause.start || s[cause.start] != '{') return NULL;
  static const char *const keys[] = {"kind", "summary", "label"};
  char *text = lagscope__alloc(CAUSE_TEXT_MAX);
  if (text == NULL) return NULL;
  lagscope__json_writer w = {0};
  lagscope__jw_begin_object(&w, NULL);
  for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
    if (lagscope__json_member_text(s + cause.start, cause.end - cause.start, keys[i], text,
                                   CAUSE_TEXT_MAX))
      lagscope__jw_string(&w, keys[i], text);
  lagscope__jw_end_object(&w);
  lagscope__dealloc(text);
  return lagscope__jw_finish(&w);
}

void lagscope__hang_report_read_parts(lagscope_hang_report *report) {
  const char *s = report->json;
  if (s == NULL) return;
  lagscope__json_span all = {0, strlen(s)};
  lagscope__json_span stack = lagscope__json_member_span(s, all, "heaviest_stack");
  if (stack.end > stack.start && s[stack.start] == '[' && report->heaviest_stack_json == NULL)
    report->heaviest_stack_json = span_copy(s, stack);
  char *cause = cause_of(s, lagscope__json_member_span(s, all, "cause"));
  if (cause != NULL) lagscope__hang_report_set_cause(report, cause);
}
