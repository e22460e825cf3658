/*
 * A stored hang report (docs/hang-report.md) as files that profilers open: speedscope's file
 * format and Chrome's Trace Event Format (Perfetto, chrome://tracing). Portable, no I/O.
 *
 * Contents: reading the report (its call tree, then its samples), frames and their names, the
 * speedscope file, the Chrome trace.
 *
 * The samples. A report's "samples.timeline" lists each kept main-thread sample in time order:
 * t_ms since the hang's start and the id of the call_tree node where its stack ended (ids are
 * preorder positions, the root 0; a sample's stack is the path root -> node). A sample stands
 * for the time until the next one; the last for one sample interval, cut at the hang's end so
 * that no sample outlives the hang. Reports written before the timeline existed fall back to the
 * call tree: one sample per node with self > 0, in preorder, lasting self x interval. That
 * keeps the proportions (a flame graph is right) but not the order in time.
 *
 * Times are whole microseconds internally (reports round to 0.001 ms), so the weights and
 * timestamps written are exact, and clamped so that no input can overflow them.
 */
#include "web.h"

#include "cjson_calls.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_INTERVAL_MS 10.0  /* config's hang_sample_interval_ms default, if a report lacks it */
#define MAX_SPAN_US 1000000000000 /* 11.6 days: longer times in a report are clamped to it */
#define FRAME_NAME_MAX 320        /* "0x<offset> (<basename>)": NAME_MAX is 255 */

/* ---- reading the report ---------------------------------------------------------------------- */

typedef struct node {
  const cJSON *json;
  int32_t parent; /* -1 for the root */
  uint32_t depth; /* the root 0, its children 1, ... */
} node;

typedef struct sample {
  int32_t node;      /* where its stack ended */
  int64_t at_us;     /* since the hang's start */
  int64_t weight_us; /* how long it stands for */
} sample;

typedef struct profile {
  cJSON *report;
  node *nodes;
  size_t node_count;
  uint32_t max_depth;
  sample *samples;
  size_t sample_count;
  int from_timeline;
  int64_t duration_us, interval_us;
} profile;

static double number_of(const cJSON *object, const char *name, double fallback) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, name);
  return cJSON_IsNumber(item) ? item->valuedouble : fallback;
}

static const char *string_of(const cJSON *object, const char *name) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, name);
  return cJSON_IsString(item) ? item->valuestring : NULL;
}

static int64_t ms_to_us(double ms) {
  if (!(ms > 0)) return 0; /* also NaN */
  if (ms >= MAX_SPAN_US / 1000.0) return MAX_SPAN_US;
  return (int64_t)llround(ms * 1000.0);
}

/* A node's children that are objects; anything else in the array is ignored. */
static const cJSON *first_child(const cJSON *json) {
  const cJSON *children = cJSON_GetObjectItemCaseSensitive(json, "children");
  return cJSON_IsArray(children) ? children->child : NULL;
}

static size_t count_nodes(const cJSON *json) {
  size_t n = 1;
  for (const cJSON *c = first_child(json); c != NULL; c = c->next)
    if (cJSON_IsObject(c)) n += count_nodes(c);
  return n;
}

/* Preorder, as the report numbers its nodes. Recursion is bounded: cJSON refuses documents
 * nested deeper than CJSON_NESTING_LIMIT. Returns 0, or -1 when an id disagrees. */
static int collect_nodes(profile *p, const cJSON *json, int32_t parent, uint32_t depth) {
  size_t index = p->node_count++;
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(json, "id");
  if (id != NULL && !(cJSON_IsNumber(id) && id->valuedouble == (double)index)) return -1;
  p->nodes[index] = (node){json, parent, depth};
  if (depth > p->max_depth) p->max_depth = depth;
  for (const cJSON *c = first_child(json); c != NULL; c = c->next)
    if (cJSON_IsObject(c) && collect_nodes(p, c, (int32_t)index, depth + 1) != 0) return -1;
  return 0;
}

/* The last sample lasts one interval, but not past the hang's end. */
static int64_t last_weight(const profile *p, int64_t at_us) {
  int64_t left = p->duration_us - at_us;
  if (left < 0) left = 0;
  return left < p->interval_us ? left : p->interval_us;
}

static int timeline_node(const profile *p, const cJSON *item, int32_t *out) {
  if (!cJSON_IsNumber(item)) return -1;
  double v = item->valuedouble;
  if (!(v >= 0 && v < (double)p->node_count) || v != floor(v)) return -1;
  *out = (int32_t)v;
  return 0;
}

static int samples_from_timeline(profile *p, const cJSON *timeline) {
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(timeline, "t_ms");
  const cJSON *n = cJSON_GetObjectItemCaseSensitive(timeline, "node");
  if (!cJSON_IsArray(t) || !cJSON_IsArray(n)) return -1;
  size_t count = (size_t)cJSON_GetArraySize(t);
  if (count != (size_t)cJSON_GetArraySize(n)) return -1;
  p->samples = lagscope__alloc_array(count + 1, sizeof *p->samples);
  if (p->samples == NULL) return -2;
  const cJSON *ti = t->child, *ni = n->child;
  for (size_t i = 0; i < count; i++, ti = ti->next, ni = ni->next) {
    sample *s = &p->samples[i];
    if (!cJSON_IsNumber(ti) || timeline_node(p, ni, &s->node) != 0) return -1;
    s->at_us = ms_to_us(ti->valuedouble);
    if (i > 0) {
      if (s->at_us < s[-1].at_us) s->at_us = s[-1].at_us; /* never back in time */
      s[-1].weight_us = s->at_us - s[-1].at_us;
    }
  }
  if (count > 0) p->samples[count - 1].weight_us = last_weight(p, p->samples[count - 1].at_us);
  p->sample_count = count;
  p->from_timeline = 1;
  return 0;
}

/* No timeline: each node's own samples back to back, in preorder, from the hang's start. */
static int samples_from_tree(profile *p) {
  p->samples = lagscope__alloc_array(p->node_count, sizeof *p->samples);
  if (p->samples == NULL) return -2;
  int64_t at = 0;
  for (size_t i = 0; i < p->node_count; i++) {
    double self = number_of(p->nodes[i].json, "self", 0);
    if (!(self >= 1)) continue;
    sample *s = &p->samples[p->sample_count++];
    s->node = (int32_t)i;
    s->at_us = at;
    s->weight_us = ms_to_us(self * (double)p->interval_us / 1000.0);
    at += s->weight_us;
    if (at > MAX_SPAN_US) at = MAX_SPAN_US;
  }
  return 0;
}

static int check_report(const cJSON *report, char *why, size_t why_size) {
  if (!cJSON_IsObject(report)) {
    lagscope__explain(why, why_size, "The report is not a JSON object.");
    return -1;
  }
  if (number_of(report, "schema_version", -1) != 1) {
    lagscope__explain(why, why_size, "The report's schema_version is missing or not 1.");
    return -1;
  }
  if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(report, "call_tree"))) {
    lagscope__explain(why, why_size, "The report has no call_tree object.");
    return -1;
  }
  return 0;
}

static int load_nodes(profile *p, char *why, size_t why_size) {
  const cJSON *root = cJSON_GetObjectItemCaseSensitive(p->report, "call_tree");
  p->nodes = lagscope__alloc_array(count_nodes(root), sizeof *p->nodes);
  if (p->nodes == NULL) {
    lagscope__explain(why, why_size, "Out of memory.");
    return -1;
  }
  if (collect_nodes(p, root, -1, 0) != 0) {
    lagscope__explain(why, why_size,
                      "The report's call_tree ids are not the nodes' preorder positions.");
    return -1;
  }
  return 0;
}

static int load_samples(profile *p, char *why, size_t why_size) {
  const cJSON *samples = cJSON_GetObjectItemCaseSensitive(p->report, "samples");
  const cJSON *timeline = cJSON_GetObjectItemCaseSensitive(samples, "timeline");
  int rc = timeline != NULL ? samples_from_timeline(p, timeline) : samples_from_tree(p);
  if (rc == -1)
    lagscope__explain(why, why_size, "The report's samples.timeline is malformed (t_ms and node must "
                      "be arrays of one length, node holding call_tree ids).");
  if (rc == -2) lagscope__explain(why, why_size, "Out of memory.");
  return rc;
}

static void profile_free(profile *p) {
  cJSON_Delete(p->report);
  lagscope__dealloc(p->nodes);
  lagscope__dealloc(p->samples);
}

static int profile_load(profile *p, const char *json, char *why, size_t why_size) {
  memset(p, 0, sizeof *p);
  p->report = json != NULL ? cJSON_Parse(json) : NULL;
  if (p->report == NULL) {
    lagscope__explain(why, why_size, "The report is not valid JSON.");
    return -1;
  }
  double interval_ms = number_of(p->report, "sample_interval_ms", DEFAULT_INTERVAL_MS);
  p->interval_us = ms_to_us(interval_ms > 0 ? interval_ms : DEFAULT_INTERVAL_MS);
  p->duration_us = ms_to_us(number_of(p->report, "duration_ms", 0));
  if (check_report(p->report, why, why_size) != 0 || load_nodes(p, why, why_size) != 0 ||
      load_samples(p, why, why_size) != 0) {
    profile_free(p);
    return -1;
  }
  return 0;
}

/* Writes the nodes from the root's child down to n, outermost first; returns how many (n's
 * depth). path holds max_depth entries. */
static size_t node_path(const profile *p, int32_t n, int32_t *path) {
  size_t depth = p->nodes[n].depth;
  for (size_t i = depth; i > 0; i--, n = p->nodes[n].parent) path[i - 1] = n;
  return depth;
}

static int64_t samples_end_us(const profile *p) {
  if (p->sample_count == 0) return 0;
  const sample *last = &p->samples[p->sample_count - 1];
  return last->at_us + last->weight_us;
}

/* ---- building JSON: one flag for every allocation that failed --------------------------------- */

typedef struct builder {
  int failed;
} builder;

static cJSON *checked(builder *b, cJSON *item) {
  if (item == NULL) b->failed = 1;
  return item;
}

static void put_number(builder *b, cJSON *object, const char *name, double value) {
  checked(b, cJSON_AddNumberToObject(object, name, value));
}

/* Microseconds of Unix time need 16 digits, and cJSON would print them as 1.71231187225e+15:
 * written as integers they stay readable and exact. */
static void put_integer(builder *b, cJSON *object, const char *name, int64_t value) {
  char text[24];
  snprintf(text, sizeof text, "%lld", (long long)value);
  checked(b, cJSON_AddRawToObject(object, name, text));
}

static void put_string(builder *b, cJSON *object, const char *name, const char *value) {
  checked(b, value != NULL ? cJSON_AddStringToObject(object, name, value)
                           : cJSON_AddNullToObject(object, name));
}

/* Appends item, or frees it: returns item, or NULL when it is gone. */
static cJSON *push(builder *b, cJSON *array, cJSON *item) {
  if (item != NULL && cJSON_AddItemToArray(array, item)) return item;
  cJSON_Delete(item);
  b->failed = 1;
  return NULL;
}

static char *print_or_explain(builder *b, cJSON *doc, char *why, size_t why_size) {
  char *text = b->failed || doc == NULL ? NULL : cJSON_PrintUnformatted(doc);
  if (text == NULL) lagscope__explain(why, why_size, "Out of memory.");
  cJSON_Delete(doc);
  return text;
}

/* ---- frames and their names -------------------------------------------------------------------- */

static const char *basename_of(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash != NULL ? slash + 1 : path;
}

/* The function's name; unknown, "0x<module_offset> (<module's file name>)"; with no module,
 * the address. */
static const char *frame_name(const cJSON *frame, char *buffer, size_t size) {
  const char *function = string_of(frame, "function");
  const char *module = string_of(frame, "module");
  const char *offset = string_of(frame, "module_offset");
  const char *address = string_of(frame, "address");
  if (function != NULL) return function;
  if (module != NULL && offset != NULL) {
    snprintf(buffer, size, "%s (%s)", offset, basename_of(module));
    return buffer;
  }
  return address != NULL ? address : "(unknown)";
}

/* What makes two nodes one frame: the same function in the same module, or when the function
 * is unknown, the same place in the same module (or the same address, without a module). */
typedef struct frame_key {
  const char *function, *module, *where;
} frame_key;

static frame_key key_of(const cJSON *json) {
  frame_key k = {string_of(json, "function"), string_of(json, "module"), NULL};
  if (k.function == NULL)
    k.where = string_of(json, k.module != NULL ? "module_offset" : "address");
  return k;
}

static int same_text(const char *a, const char *b) {
  return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static int same_key(frame_key a, frame_key b) {
  return same_text(a.function, b.function) && same_text(a.module, b.module) &&
         same_text(a.where, b.where);
}

static uint64_t hash_text(uint64_t h, const char *s) { /* FNV-1a; NULL hashes apart from "" */
  h = (h ^ (s == NULL ? 1u : 2u)) * 1099511628211u;
  for (; s != NULL && *s != '\0'; s++) h = (h ^ (unsigned char)*s) * 1099511628211u;
  return h;
}

static uint64_t hash_key(frame_key k) {
  return hash_text(hash_text(hash_text(14695981039346656037u, k.function), k.module), k.where);
}

/* Open addressing over node indexes: slot -> the first node of a frame, or -1. */
typedef struct frame_table {
  int32_t *slot_node;
  size_t mask;
  int32_t *frame_of_node; /* node index -> its frame's index in speedscope's shared.frames */
  int32_t frame_count;
} frame_table;

static int frame_table_init(frame_table *t, size_t node_count) {
  size_t capacity = 16;
  while (capacity < node_count * 2) capacity *= 2;
  t->slot_node = lagscope__alloc_array(capacity, sizeof *t->slot_node);
  t->frame_of_node = lagscope__alloc_array(node_count, sizeof *t->frame_of_node);
  t->mask = capacity - 1;
  t->frame_count = 0;
  if (t->slot_node == NULL || t->frame_of_node == NULL) return -1;
  memset(t->slot_node, 0xff, capacity * sizeof *t->slot_node); /* every slot -1 */
  return 0;
}

static void frame_table_free(frame_table *t) {
  lagscope__dealloc(t->slot_node);
  lagscope__dealloc(t->frame_of_node);
}

/* The frame of node n: found, or added (1 is returned when it is new). */
static int frame_table_find(frame_table *t, const profile *p, int32_t n) {
  frame_key k = key_of(p->nodes[n].json);
  size_t i = (size_t)hash_key(k) & t->mask;
  while (t->slot_node[i] >= 0) {
    int32_t other = t->slot_node[i];
    if (same_key(k, key_of(p->nodes[other].json))) {
      t->frame_of_node[n] = t->frame_of_node[other];
      return 0;
    }
    i = (i + 1) & t->mask;
  }
  t->slot_node[i] = n;
  t->frame_of_node[n] = t->frame_count++;
  return 1;
}

/* ---- speedscope ------------------------------------------------------------------------------- */

static cJSON *speedscope_frame(builder *b, const cJSON *json) {
  char buffer[FRAME_NAME_MAX];
  cJSON *frame = checked(b, cJSON_CreateObject());
  put_string(b, frame, "name", frame_name(json, buffer, sizeof buffer));
  const char *file = string_of(json, "file");
  const cJSON *line = cJSON_GetObjectItemCaseSensitive(json, "line");
  if (file != NULL) put_string(b, frame, "file", file);
  if (cJSON_IsNumber(line)) put_number(b, frame, "line", line->valuedouble);
  return frame;
}

/* shared.frames, in the order the preorder walk first meets them. The root is no frame. */
static void speedscope_frames(builder *b, const profile *p, frame_table *t, cJSON *frames) {
  for (size_t n = 1; n < p->node_count; n++)
    if (frame_table_find(t, p, (int32_t)n)) push(b, frames, speedscope_frame(b, p->nodes[n].json));
}

static cJSON *speedscope_stack(builder *b, const profile *p, const frame_table *t,
                               const sample *s, int32_t *path) {
  size_t depth = node_path(p, s->node, path);
  cJSON *stack = checked(b, cJSON_CreateArray());
  for (size_t i = 0; i < depth; i++)
    push(b, stack, cJSON_CreateNumber(t->frame_of_node[path[i]]));
  return stack;
}

static void speedscope_samples(builder *b, const profile *p, const frame_table *t,
                               cJSON *profile_json) {
  cJSON *stacks = checked(b, cJSON_AddArrayToObject(profile_json, "samples"));
  cJSON *weights = checked(b, cJSON_AddArrayToObject(profile_json, "weights"));
  int32_t *path = lagscope__alloc_array(p->max_depth + 1, sizeof *path);
  if (path == NULL) {
    b->failed = 1;
    return;
  }
  for (size_t i = 0; i < p->sample_count && !b->failed; i++) {
    push(b, stacks, speedscope_stack(b, p, t, &p->samples[i], path));
    push(b, weights, cJSON_CreateNumber((double)p->samples[i].weight_us / 1000.0));
  }
  lagscope__dealloc(path);
}

static cJSON *speedscope_doc(builder *b, const profile *p, frame_table *t) {
  const char *id = string_of(p->report, "id");
  char name[160];
  snprintf(name, sizeof name, "main thread \xe2\x80\x94 hang %s", id != NULL ? id : "?");
  /* endValue is the hang's length; never less than the samples', which speedscope needs. */
  int64_t end = p->duration_us > samples_end_us(p) ? p->duration_us : samples_end_us(p);
  cJSON *doc = checked(b, cJSON_CreateObject());
  put_string(b, doc, "$schema", "https://www.speedscope.app/file-format-schema.json");
  put_string(b, doc, "name", name);
  put_string(b, doc, "exporter", "lagscope " LAGSCOPE_VERSION_STRING);
  put_number(b, doc, "activeProfileIndex", 0);
  cJSON *shared = checked(b, cJSON_AddObjectToObject(doc, "shared"));
  speedscope_frames(b, p, t, checked(b, cJSON_AddArrayToObject(shared, "frames")));
  cJSON *profiles = checked(b, cJSON_AddArrayToObject(doc, "profiles"));
  cJSON *profile_json = checked(b, cJSON_CreateObject());
  put_string(b, profile_json, "type", "sampled");
  put_string(b, profile_json, "name", name);
  put_string(b, profile_json, "unit", "milliseconds");
  put_number(b, profile_json, "startValue", 0);
  put_number(b, profile_json, "endValue", (double)end / 1000.0);
  speedscope_samples(b, p, t, profile_json);
  push(b, profiles, profile_json);
  return doc;
}

char *lagscope__web_export_speedscope(const char *report_json, char *why, size_t why_size) {
  profile p;
  if (profile_load(&p, report_json, why, why_size) != 0) return NULL;
  builder b = {0};
  frame_table t;
  cJSON *doc = NULL;
  if (frame_table_init(&t, p.node_count) == 0) doc = speedscope_doc(&b, &p, &t);
  else b.failed = 1;
  char *text = print_or_explain(&b, doc, why, why_size);
  frame_table_free(&t);
  profile_free(&p);
  return text;
}

/* ---- Chrome's Trace Event Format ---------------------------------------------------------------
 * Times are microseconds of Unix time (start.wall_ms), so the trace lines up with other traces
 * and logs of the same moment. */

#define MAX_WALL_MS 100000000000000.0 /* year 5138: later start times are clamped to it */

static int64_t wall_to_us(double wall_ms) {
  if (!(wall_ms > 0)) return 0;
  return (int64_t)llround(wall_ms < MAX_WALL_MS ? wall_ms : MAX_WALL_MS) * 1000;
}

typedef struct trace {
  builder b;
  const profile *p;
  cJSON *events;
  double pid, main_tid;
  int64_t start_us;
} trace;

static cJSON *trace_event(trace *t, const char *name, const char *ph, double tid) {
  cJSON *event = checked(&t->b, cJSON_CreateObject());
  put_string(&t->b, event, "name", name);
  put_string(&t->b, event, "ph", ph);
  put_number(&t->b, event, "pid", t->pid);
  put_number(&t->b, event, "tid", tid);
  return push(&t->b, t->events, event); /* filled in further while the doc owns it */
}

static void trace_metadata(trace *t, const char *kind, double tid, const char *name) {
  cJSON *event = trace_event(t, kind, "M", tid);
  put_string(&t->b, checked(&t->b, cJSON_AddObjectToObject(event, "args")), "name", name);
}

static int is_main_thread(const trace *t, const cJSON *thread) {
  return number_of(thread, "tid", -1) == t->main_tid ||
         cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(thread, "is_main"));
}

/* Names: the app, the main thread (first in the viewer), then every other thread captured. */
static void trace_names(trace *t) {
  const cJSON *app = cJSON_GetObjectItemCaseSensitive(t->p->report, "app");
  const cJSON *threads = cJSON_GetObjectItemCaseSensitive(t->p->report, "threads");
  const char *app_name = string_of(app, "name"), *main_name = "main thread";
  for (const cJSON *th = cJSON_IsArray(threads) ? threads->child : NULL; th; th = th->next)
    if (is_main_thread(t, th) && string_of(th, "name") != NULL) main_name = string_of(th, "name");
  trace_metadata(t, "process_name", t->main_tid, app_name != NULL ? app_name : "app");
  trace_metadata(t, "thread_name", t->main_tid, main_name);
  cJSON *sort = trace_event(t, "thread_sort_index", "M", t->main_tid);
  put_number(&t->b, checked(&t->b, cJSON_AddObjectToObject(sort, "args")), "sort_index", -1);
  for (const cJSON *th = cJSON_IsArray(threads) ? threads->child : NULL; th; th = th->next)
    if (!is_main_thread(t, th) && string_of(th, "name") != NULL)
      trace_metadata(t, "thread_name", number_of(th, "tid", 0), string_of(th, "name"));
}

static void trace_hang(trace *t) {
  char name[64];
  snprintf(name, sizeof name, "hang %.0f ms", number_of(t->p->report, "duration_ms", 0));
  int64_t end = t->p->duration_us > samples_end_us(t->p) ? t->p->duration_us : samples_end_us(t->p);
  cJSON *event = trace_event(t, name, "X", t->main_tid);
  put_string(&t->b, event, "cat", "hang");
  put_integer(&t->b, event, "ts", t->start_us);
  put_integer(&t->b, event, "dur", end);
  cJSON *args = checked(&t->b, cJSON_AddObjectToObject(event, "args"));
  put_string(&t->b, args, "id", string_of(t->p->report, "id"));
  put_string(&t->b, args, "state", string_of(t->p->report, "state"));
}

/* Where a frame is, for the event's args: whichever of these the report has. */
static void frame_args(builder *b, cJSON *args, const cJSON *frame) {
  static const char *const texts[] = {"module", "module_offset", "address", "file"};
  for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
    if (string_of(frame, texts[i]) != NULL) put_string(b, args, texts[i], string_of(frame, texts[i]));
  static const char *const numbers[] = {"offset", "line"};
  for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++) {
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(frame, numbers[i]);
    if (cJSON_IsNumber(n)) put_number(b, args, numbers[i], n->valuedouble);
  }
}

/* A frame's complete event, opened at at_us; its dur is set when it closes. */
static cJSON *trace_open(trace *t, int32_t n, int64_t at_us) {
  char buffer[FRAME_NAME_MAX];
  const cJSON *json = t->p->nodes[n].json;
  cJSON *event = trace_event(t, frame_name(json, buffer, sizeof buffer), "X", t->main_tid);
  put_string(&t->b, event, "cat", "stack");
  put_integer(&t->b, event, "ts", t->start_us + at_us);
  frame_args(&t->b, checked(&t->b, cJSON_AddObjectToObject(event, "args")), json);
  return event;
}

/* The frames open while consecutive samples share them: open[d] is the node at depth d + 1. */
typedef struct open_stack {
  int32_t *node;
  cJSON **event;
  int64_t *since_us;
  size_t depth;
} open_stack;

static void trace_close_to(trace *t, open_stack *o, size_t depth, int64_t at_us) {
  for (; o->depth > depth; o->depth--)
    put_integer(&t->b, o->event[o->depth - 1], "dur", at_us - o->since_us[o->depth - 1]);
}

/* Each sample: close what it does not share with the previous one, open the rest. Nodes are
 * paths from the root, so "the same node at depth d" is "the same frames down to depth d", and
 * merged events always nest inside their parents. */
static void trace_sample(trace *t, open_stack *o, const sample *s, int32_t *path) {
  size_t depth = node_path(t->p, s->node, path), common = 0;
  while (common < depth && common < o->depth && o->node[common] == path[common]) common++;
  trace_close_to(t, o, common, s->at_us);
  for (; o->depth < depth; o->depth++) {
    o->node[o->depth] = path[o->depth];
    o->event[o->depth] = trace_open(t, path[o->depth], s->at_us);
    o->since_us[o->depth] = s->at_us;
  }
}

static void trace_stacks(trace *t) {
  size_t max = t->p->max_depth + 1;
  open_stack o = {lagscope__alloc_array(max, sizeof *o.node),
                  lagscope__alloc_array(max, sizeof *o.event),
                  lagscope__alloc_array(max, sizeof *o.since_us), 0};
  int32_t *path = lagscope__alloc_array(max, sizeof *path);
  if (o.node != NULL && o.event != NULL && o.since_us != NULL && path != NULL) {
    for (size_t i = 0; i < t->p->sample_count && !t->b.failed; i++)
      trace_sample(t, &o, &t->p->samples[i], path);
    trace_close_to(t, &o, 0, samples_end_us(t->p));
  } else {
    t->b.failed = 1;
  }
  lagscope__dealloc(o.node), lagscope__dealloc(o.event), lagscope__dealloc(o.since_us);
  lagscope__dealloc(path);
}

/* Every other thread's stack as captured at the hang's start: an instant event on its track. */
static void trace_thread_stack(trace *t, const cJSON *thread) {
  const char *name = string_of(thread, "name");
  cJSON *event = trace_event(t, name != NULL ? name : "thread", "i", number_of(thread, "tid", 0));
  put_string(&t->b, event, "cat", "threads");
  put_string(&t->b, event, "s", "t");
  put_integer(&t->b, event, "ts", t->start_us);
  cJSON *args = checked(&t->b, cJSON_AddObjectToObject(event, "args"));
  put_string(&t->b, args, "state", string_of(thread, "state"));
  put_string(&t->b, args, "walk", string_of(thread, "walk"));
  cJSON *stack = checked(&t->b, cJSON_AddArrayToObject(args, "stack")); /* innermost first */
  const cJSON *frames = cJSON_GetObjectItemCaseSensitive(thread, "stack");
  char buffer[FRAME_NAME_MAX];
  for (const cJSON *f = cJSON_IsArray(frames) ? frames->child : NULL; f; f = f->next)
    push(&t->b, stack, cJSON_CreateString(frame_name(f, buffer, sizeof buffer)));
}

static void trace_threads(trace *t) {
  const cJSON *threads = cJSON_GetObjectItemCaseSensitive(t->p->report, "threads");
  for (const cJSON *th = cJSON_IsArray(threads) ? threads->child : NULL; th; th = th->next)
    if (cJSON_IsObject(th) && !is_main_thread(t, th)) trace_thread_stack(t, th);
}

static void trace_other_data(trace *t, cJSON *doc) {
  const cJSON *report = t->p->report;
  cJSON *other = checked(&t->b, cJSON_AddObjectToObject(doc, "otherData"));
  put_string(&t->b, other, "report_id", string_of(report, "id"));
  put_string(&t->b, other, "app", string_of(cJSON_GetObjectItemCaseSensitive(report, "app"), "name"));
  put_number(&t->b, other, "pid", t->pid);
  put_number(&t->b, other, "hang_id", number_of(report, "hang_id", 0));
  put_string(&t->b, other, "state", string_of(report, "state"));
  put_string(&t->b, other, "lagscope_version", string_of(report, "lagscope_version"));
  put_number(&t->b, other, "sample_interval_ms", (double)t->p->interval_us / 1000.0);
  put_string(&t->b, other, "samples_from", t->p->from_timeline ? "timeline" : "call_tree");
}

char *lagscope__web_export_chrome_trace(const char *report_json, char *why, size_t why_size) {
  profile p;
  if (profile_load(&p, report_json, why, why_size) != 0) return NULL;
  trace t = {{0}, &p, NULL, 0, 0, 0};
  const cJSON *app = cJSON_GetObjectItemCaseSensitive(p.report, "app");
  t.pid = floor(number_of(app, "pid", 0));
  t.main_tid = floor(number_of(p.report, "main_thread_tid", 0));
  const cJSON *start = cJSON_GetObjectItemCaseSensitive(p.report, "start");
  t.start_us = wall_to_us(number_of(start, "wall_ms", 0));
  cJSON *doc = checked(&t.b, cJSON_CreateObject());
  t.events = checked(&t.b, cJSON_AddArrayToObject(doc, "traceEvents"));
  put_string(&t.b, doc, "displayTimeUnit", "ms");
  trace_other_data(&t, doc);
  trace_names(&t);
  trace_hang(&t);
  trace_stacks(&t);
  trace_threads(&t);
  char *text = print_or_explain(&t.b, doc, why, why_size);
  profile_free(&p);
  return text;
}
