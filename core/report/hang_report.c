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
