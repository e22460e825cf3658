/*
 * The JSON routes of docs/viewer-api.md: status, recent metrics, the stored hang reports (a
 * page of summaries, one whole, or an export of one) and "capture every thread now". Reports
 * are read from the store's folder at each request, so reports of earlier launches are there
 * and nothing is held twice in memory.
 */
#define _GNU_SOURCE
#include "http.h"

#include "cjson_calls.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NS_PER_MS 1000000u
#define CAPTURE_EVERY_NS (1000u * NS_PER_MS) /* the capture route's rate limit */
#define CAPTURE_TIMEOUT_NS (3000u * NS_PER_MS)

static char *print(cJSON *doc) {
  char *text = doc != NULL ? cJSON_PrintUnformatted(doc) : NULL;
  cJSON_Delete(doc);
  return text;
}

/* ---- status ---------------------------------------------------------------------------------- */

/* A config field in the status JSON as its type says: on/off fields are booleans. */
static void add_u32(cJSON *o, const char *name, uint32_t v) { cJSON_AddNumberToObject(o, name, v); }
static void add_u64(cJSON *o, const char *name, uint64_t v) {
  lagscope__web_json_add_u64(o, name, v);
}
static void add_on_off(cJSON *o, const char *name, int v) {
  cJSON_AddBoolToObject(o, name, v != 0);
}

/* The values in effect that these fields only ask for (status IN_USE in the table). */
static uint32_t in_use_capture_signal(const lagscope__web *web) {
  (void)web;
  return (uint32_t)lagscope__capture_signal(); /* 0: none */
}
static uint32_t in_use_server_port(const lagscope__web *web) { return web->port; }

/* The table's rows (LAGSCOPE__CONFIG_FIELDS, column status), then what no row says. */
static void add_config(cJSON *o, const lagscope__web *web) {
  const lagscope_config *c = &web->config;
#define LAGSCOPE_ADD_(name, value)                                                            \
  _Generic(c->name, uint32_t: add_u32, uint64_t: add_u64, int: add_on_off)(o, #name, value);
#define LAGSCOPE_STATUS_CONFIG_(name) LAGSCOPE_ADD_(name, c->name)
#define LAGSCOPE_STATUS_IN_USE_(name) LAGSCOPE_ADD_(name, in_use_##name(web))
#define LAGSCOPE_STATUS_NONE_(name)
#define LAGSCOPE_ADD_FIELD_(name, type, default_value, check, min, max, unit, status)         \
  LAGSCOPE_STATUS_##status##_(name)
  LAGSCOPE__CONFIG_FIELDS(LAGSCOPE_ADD_FIELD_)
#undef LAGSCOPE_ADD_FIELD_
#undef LAGSCOPE_STATUS_NONE_
#undef LAGSCOPE_STATUS_IN_USE_
#undef LAGSCOPE_STATUS_CONFIG_
#undef LAGSCOPE_ADD_
  /* usage_interval_ms under its old name too, for readers written before the rename. */
  if (cJSON_GetObjectItemCaseSensitive(o, "sample_interval_ms") == NULL)
    add_u32(o, "sample_interval_ms", c->usage_interval_ms);
  cJSON_AddStringToObject(o, "watchdog", c->post_main != NULL ? "post_main" : "heartbeat");
  cJSON_AddStringToObject(o, "report_dir", web->report_dir);
  cJSON_AddStringToObject(o, "server_bind", web->bind);
}

/* Every address the viewer may be reached at (the URL names one: web/address.c): bound to one
 * address, that one only. */
static void add_addresses(cJSON *array, const char *bind) {
  lagscope__web_lan_address all[LAGSCOPE__WEB_LAN_ADDRESSES_MAX];
  int n = lagscope__web_reachable_addresses(bind, all, LAGSCOPE__WEB_LAN_ADDRESSES_MAX);
  for (int i = 0; i < n && array != NULL; i++) {
    cJSON *a = cJSON_CreateObject();
    if (a == NULL) return;
    cJSON_AddStringToObject(a, "interface", all[i].interface);
    cJSON_AddStringToObject(a, "address", all[i].address);
    cJSON_AddItemToArray(array, a);
  }
}

static void add_server(cJSON *o, lagscope__web *web) {
  lagscope__web_stream_counts counts;
  lagscope__web_stream_counts_read(web->stream, &counts);
  lagscope__web_json_add_u64(o, "requests", atomic_load(&web->requests));
  cJSON_AddNumberToObject(o, "clients", atomic_load(&web->clients));
  lagscope__web_json_add_u64(o, "clients_rejected", atomic_load(&web->clients_rejected));
  cJSON_AddNumberToObject(o, "stream_clients", counts.clients);
  lagscope__web_json_add_u64(o, "stream_clients_rejected", counts.rejected);
  lagscope__web_json_add_u64(o, "stream_clients_dropped", counts.clients_dropped);
  lagscope__web_json_add_u64(o, "stream_events_sent", counts.events_sent);
  lagscope__web_json_add_u64(o, "stream_events_dropped", counts.events_dropped);
}

int lagscope__web_api_status(lagscope__web_request *req) {
  lagscope__web *web = req->web;
  cJSON *doc = cJSON_CreateObject();
  if (doc == NULL) return lagscope__web_reply_json(req, 200, NULL);
  cJSON *app = cJSON_AddObjectToObject(doc, "app");
  cJSON_AddStringToObject(app, "name", web->app_name);
  cJSON_AddNumberToObject(app, "pid", lagscope__process_id());
  cJSON_AddStringToObject(doc, "lagscope_version", LAGSCOPE_VERSION_STRING);
  lagscope__web_json_add_i64(doc, "launch_wall_ms", web->launch_wall_ms);
  lagscope__web_json_add_i64(doc, "now_wall_ms", lagscope__wall_ms());
  lagscope__web_json_add_u64(doc, "uptime_ms", (lagscope__now_ns() - web->launch_ns) / NS_PER_MS);
  lagscope__web_json_add_u64(doc, "hangs", atomic_load(&web->hangs));
  cJSON_AddBoolToObject(doc, "hang_in_progress", atomic_load(&web->hang_in_progress));
  add_config(cJSON_AddObjectToObject(doc, "config"), web);
  add_server(cJSON_AddObjectToObject(doc, "server"), web);
  add_addresses(cJSON_AddArrayToObject(doc, "addresses"), web->bind);
  return lagscope__web_reply_json(req, 200, print(doc));
}

/* ---- metrics ---------------------------------------------------------------------------------- */

/* A ring's index logic (capacity slots, the next free, how many are full), for the texts of
 * the hitches and the metrics ticks alike. */

/* Takes the next slot, which the caller fills (displacing the oldest when full); its index. F */
static uint32_t ring_take(uint32_t capacity, uint32_t *next, uint32_t *count) {
  uint32_t slot = *next;
  *next = (*next + 1) % capacity;
  if (*count < capacity) (*count)++;
  return slot;
}

/* The index of the k-th oldest full slot. F */
static uint32_t ring_at(uint32_t capacity, uint32_t next, uint32_t count, uint32_t k) {
  return (next + capacity - count + k) % capacity;
}

/* Puts text in a ring's next slot; returns the text it displaced, for the caller to free
 * outside the lock. F */
static char *ring_push(char **slots, uint32_t capacity, uint32_t *next, uint32_t *count,
                       char *text) {
  uint32_t slot = ring_take(capacity, next, count);
  char *old = slots[slot];
  slots[slot] = text;
  return old;
}

void lagscope__web_api_keep_metrics(lagscope__web *web, const lagscope_event *event, char *whole) {
  lagscope__web_metrics_tick tick;
  lagscope__web_metrics_tick_of(event, &tick);
  pthread_mutex_lock(&web->metrics_lock);
  web->metrics[ring_take(LAGSCOPE__WEB_METRICS_WINDOW, &web->metrics_next, &web->metrics_count)] =
      tick;
  char *old_latest = web->metrics_latest;
  web->metrics_latest = whole;
  pthread_mutex_unlock(&web->metrics_lock);
  lagscope__dealloc(old_latest);
}

void lagscope__web_api_keep_hitch(lagscope__web *web, const char *json) {
  char *copy = lagscope__strdup(json);
  if (copy == NULL) return;
  pthread_mutex_lock(&web->metrics_lock);
  char *old = ring_push(web->hitches, web->config.hitch_keep, &web->hitches_next,
                        &web->hitches_count, copy);
  pthread_mutex_unlock(&web->metrics_lock);
  lagscope__dealloc(old);
}

/* A ring of JSON texts (slots, capacity, next free, count), oldest first, joined into
 * "<head>[a,b,...]}" (malloc'ed: reply_json frees it with lagscope_free); newest, when not
 * NULL, stands in for the newest slot. NULL when out of memory. A */
static char *join_ring(const char *head, char *const *slots, uint32_t capacity, uint32_t next,
                       uint32_t count, const char *newest) {
  size_t size = strlen(head) + 4 + (newest != NULL ? strlen(newest) : 0);
  for (uint32_t i = 0; i < capacity; i++)
    if (slots[i] != NULL) size += strlen(slots[i]) + 1;
  char *body = malloc(size); /* handed to lagscope__web_reply_json, as a cJSON text is */
  if (body == NULL) return NULL;
  size_t used = strlen(head);
  memcpy(body, head, used);
  body[used++] = '[';
  for (uint32_t k = 0; k < count; k++) {
    const char *text =
        k + 1 == count && newest != NULL ? newest : slots[ring_at(capacity, next, count, k)];
    size_t len = strlen(text);
    if (k > 0) body[used++] = ',';
    memcpy(body + used, text, len);
    used += len;
  }
  memcpy(body + used, "]}", 3);
  return body;
}

/* {"hitches": [...]}: the latest hitch events, oldest first, as the stream sent them. */
int lagscope__web_api_hitches(lagscope__web_request *req) {
  lagscope__web *web = req->web;
  pthread_mutex_lock(&web->metrics_lock);
  char *body = join_ring("{\"hitches\":", web->hitches, web->config.hitch_keep,
                         web->hitches_next, web->hitches_count, NULL);
  pthread_mutex_unlock(&web->metrics_lock);
  return lagscope__web_reply_json(req, 200, body);
}

/* The older ticks formatted, the newest one whole, joined. */
int lagscope__web_api_metrics(lagscope__web_request *req) {
  lagscope__web *web = req->web;
  char head[64];
  snprintf(head, sizeof(head), "{\"interval_ms\":%u,\"metrics\":",
           web->config.usage_interval_ms);
  char *texts[LAGSCOPE__WEB_METRICS_WINDOW] = {0};
  char *body = NULL;
  int formatted = 1;
  pthread_mutex_lock(&web->metrics_lock);
  for (uint32_t k = 0; k + 1 < web->metrics_count && formatted; k++) {
    uint32_t i = ring_at(LAGSCOPE__WEB_METRICS_WINDOW, web->metrics_next, web->metrics_count, k);
    texts[i] = lagscope__web_metrics_tick_text(&web->metrics[i]);
    formatted = texts[i] != NULL;
  }
  if (formatted)
    body = join_ring(head, texts, LAGSCOPE__WEB_METRICS_WINDOW, web->metrics_next,
                     web->metrics_count, web->metrics_latest);
  pthread_mutex_unlock(&web->metrics_lock);
  for (uint32_t i = 0; i < LAGSCOPE__WEB_METRICS_WINDOW; i++) lagscope__dealloc(texts[i]);
  return lagscope__web_reply_json(req, 200, body);
}

/* ---- hangs ------------------------------------------------------------------------------------- */

static const cJSON *member(const cJSON *o, const char *name) {
  return cJSON_GetObjectItemCaseSensitive(o, name);
}

/* Copies a member of the report into the summary, under another name, if it is there. */
static void copy_member(cJSON *to, const char *to_name, const cJSON *from, const char *name) {
  const cJSON *item = member(from, name);
  cJSON *copy = item != NULL ? cJSON_Duplicate(item, 1) : cJSON_CreateNull();
  if (copy != NULL) cJSON_AddItemToObject(to, to_name, copy);
}


/* The value of key in the object text[object), as a cJSON item (null when it is not there). */
static cJSON *item_of(const char *text, lagscope__json_span object, const char *key) {
  lagscope__json_span v = lagscope__json_member_span(text, object, key);
  cJSON *item = v.end > v.start ? cJSON_ParseWithLength(text + v.start, v.end - v.start) : NULL;
  return item != NULL ? item : cJSON_CreateNull();
}

/* The function and module of the heaviest stack's telling frame, read in the stored text (the
 * store checked that it is JSON). */
static void add_telling_frame(cJSON *summary, const char *text, size_t len) {
  lagscope__json_span stack, frame = {0, 0};
  size_t close;
  int empty;
  if (lagscope__json_find_member(text, len, "heaviest_stack", &stack, &close, &empty) == 0 &&
      stack.end > stack.start &&
      lagscope__report_telling_entry(text + stack.start, stack.end - stack.start, &frame)) {
    frame.start += stack.start;
    frame.end += stack.start;
  }
  char name[512]; /* its function, or "module+0xoffset" in a stripped program */
  if (frame.end > frame.start &&
      lagscope__report_entry_name(text + frame.start, frame.end - frame.start, name, sizeof(name)))
    cJSON_AddStringToObject(summary, "function", name);
  else
    cJSON_AddNullToObject(summary, "function");
  cJSON_AddItemToObject(summary, "module", item_of(text, frame, "module"));
}

/* One line of the list, from a stored report; NULL when the file is not a readable report. */
static cJSON *summary_of(const char *dir, const char *id) {
  char *text = NULL;
  size_t len = 0;
  if (lagscope__store_read(dir, id, &text, &len) != LAGSCOPE_OK) return NULL;
  cJSON *report = cJSON_ParseWithLength(text, len);
  if (!cJSON_IsObject(report)) {
    lagscope__dealloc(text);
    cJSON_Delete(report);
    return NULL;
  }
  cJSON *s = cJSON_CreateObject();
  cJSON_AddStringToObject(s, "id", id);
  copy_member(s, "hang_id", report, "hang_id");
  copy_member(s, "state", report, "state");
  copy_member(s, "app", member(report, "app"), "name");
  copy_member(s, "pid", member(report, "app"), "pid");
  copy_member(s, "start_wall_ms", member(report, "start"), "wall_ms");
  copy_member(s, "duration_ms", report, "duration_ms");
  copy_member(s, "samples", member(report, "samples"), "count");
  /* "startup" before the first frame; "phase" in a report written before the rename */
  copy_member(s, "app_state", report, member(report, "app_state") != NULL ? "app_state" : "phase");
  add_telling_frame(s, text, len);
  copy_member(s, "label", member(report, "cause"), "label"); /* the report's one line */
  copy_member(s, "kind", member(report, "cause"), "kind");
  copy_member(s, "signature", report, "signature"); /* null in a report from before them */
  copy_member(s, "signature_frames", report, "signature_frames");
  lagscope__dealloc(text);
  cJSON_Delete(report);
  return s;
}

/* Stored reports are parsed on a thread of lagscope's own: cJSON recurses once per level of
 * nesting, a stored report may nest LAGSCOPE__JSON_DEPTH_MAX levels (lagscope's own, a stack's
 * depth twice over), and civetweb's workers have stacks of 100 KiB (its default
 * CIVETWEB_THREAD_STACK_SIZE, as Debian builds it), which ~330 levels overflowed: one GET of a
 * planted report killed the app. The thread's stack is virtual: the pages touched cost. */
#define PARSE_STACK_BYTES (8u * 1024u * 1024u)

/* Runs fn(arg) on that thread and waits for it. LAGSCOPE_OK, or why fn did not run. A */
static int on_parse_thread(void (*fn)(void *), void *arg) {
  lagscope__thread *t = NULL;
  int rc = lagscope__thread_start_sized(&t, "lagscope-json", fn, arg, PARSE_STACK_BYTES);
  if (rc == LAGSCOPE_OK) lagscope__thread_join(t);
  return rc;
}

typedef struct hang_list_job {
  lagscope__web_request *req;
  const lagscope__store_entry *entries;
  size_t count;
  char *text; /* the answer, printed; NULL when out of memory */
} hang_list_job;

/* Adds a tally line's count to *total. */
static void count_evicted(void *ctx, const lagscope__store_tallied *hangs) {
  *(uint64_t *)ctx += hangs->count;
}

/* How many hangs' reports the store's bounds deleted (its tally): the list leaves them out. */
static uint64_t evicted_count(const char *dir) {
  uint64_t total = 0;
  lagscope__store_tally_read(dir, count_evicted, &total);
  return total;
}

static void hang_list_build(void *arg) {
  hang_list_job *job = arg;
  const lagscope__web_route *route = &job->req->route;
  cJSON *doc = cJSON_CreateObject();
  cJSON_AddNumberToObject(doc, "total", (double)job->count);
  cJSON_AddNumberToObject(doc, "offset", route->offset);
  cJSON_AddNumberToObject(doc, "limit", route->limit);
  cJSON_AddNumberToObject(doc, "evicted", (double)evicted_count(job->req->web->report_dir));
  cJSON *list = cJSON_AddArrayToObject(doc, "hangs");
  for (size_t i = route->offset; i < job->count && i < (size_t)route->offset + route->limit; i++) {
    cJSON *summary = summary_of(job->req->web->report_dir, job->entries[i].id);
    if (summary != NULL) cJSON_AddItemToArray(list, summary);
  }
  job->text = print(doc);
}

/* ---- the hangs by signature ----------------------------------------------------------------- */

#define SIGNATURE_IDS_MAX 100 /* report ids a group lists, newest first: the rest are counted */

static double number_of(const cJSON *o, const char *name) {
  const cJSON *item = member(o, name);
  return cJSON_IsNumber(item) ? item->valuedouble : 0.0;
}

static cJSON *group_of(cJSON *groups, const char *signature) {
  cJSON *g;
  cJSON_ArrayForEach(g, groups) {
    const cJSON *s = member(g, "signature");
    if (cJSON_IsString(s) && strcmp(s->valuestring, signature) == 0) return g;
  }
  return NULL;
}

/* A new group from its newest hang's summary (the store lists the newest first). */
static cJSON *group_new(cJSON *groups, const cJSON *summary) {
  cJSON *g = cJSON_CreateObject();
  if (g == NULL) return NULL;
  copy_member(g, "signature", summary, "signature");
  copy_member(g, "label", summary, "label");
  copy_member(g, "kind", summary, "kind");
  copy_member(g, "signature_frames", summary, "signature_frames");
  cJSON_AddNumberToObject(g, "count", 0);
  cJSON_AddNumberToObject(g, "reports", 0);
  cJSON_AddNumberToObject(g, "evicted", 0);
  cJSON_AddNumberToObject(g, "total_ms", 0);
  cJSON_AddNumberToObject(g, "max_ms", 0);
  cJSON_AddNumberToObject(g, "last_wall_ms", number_of(summary, "start_wall_ms"));
  cJSON_AddNumberToObject(g, "first_wall_ms", number_of(summary, "start_wall_ms"));
  cJSON_AddArrayToObject(g, "ids");
  cJSON_AddItemToArray(groups, g);
  return g;
}

/* A number of the group set in place (the viewer's cJSON table has no setter: the fields are
 * cJSON's public ones). */
static void set_number(cJSON *g, const char *name, double value) {
  cJSON *item = cJSON_GetObjectItemCaseSensitive(g, name);
  if (!cJSON_IsNumber(item)) return;
  item->valuedouble = value;
  item->valueint = value >= 2147483647.0 ? 2147483647 : (int)value;
}

static void group_add(cJSON *g, const cJSON *summary) {
  double ms = number_of(summary, "duration_ms");
  set_number(g, "count", number_of(g, "count") + 1);
  set_number(g, "reports", number_of(g, "reports") + 1);
  set_number(g, "total_ms", number_of(g, "total_ms") + ms);
  if (ms > number_of(g, "max_ms")) set_number(g, "max_ms", ms);
  set_number(g, "first_wall_ms", number_of(summary, "start_wall_ms")); /* the oldest so far */
  cJSON *ids = cJSON_GetObjectItemCaseSensitive(g, "ids");
  const cJSON *id = member(summary, "id");
  if (cJSON_IsString(id) && cJSON_GetArraySize(ids) < SIGNATURE_IDS_MAX)
    cJSON_AddItemToArray(ids, cJSON_CreateString(id->valuestring));
}

/* What the signature list adds up beside its groups. */
typedef struct signature_totals {
  cJSON *groups;
  double unsigned_hangs, reports, evicted;
} signature_totals;

/* One signature's evicted hangs (the store's tally) added to its group, made when no kept
 * report has that signature: counted, never listed (no report left to list). */
static void group_add_evicted(void *ctx, const lagscope__store_tallied *hangs) {
  signature_totals *t = ctx;
  double n = (double)hangs->count;
  t->evicted += n;
  if (hangs->signature == NULL) {
    t->unsigned_hangs += n;
    return;
  }
  cJSON *g = group_of(t->groups, hangs->signature);
  if (g == NULL) {
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "signature", hangs->signature);
    if (hangs->label != NULL) cJSON_AddStringToObject(s, "label", hangs->label);
    if (hangs->kind != NULL) cJSON_AddStringToObject(s, "kind", hangs->kind);
    cJSON_AddNumberToObject(s, "start_wall_ms", (double)hangs->last_wall_ms);
    g = s != NULL ? group_new(t->groups, s) : NULL;
    cJSON_Delete(s);
    if (g == NULL) return;
  }
  set_number(g, "count", number_of(g, "count") + n);
  set_number(g, "evicted", number_of(g, "evicted") + n);
  set_number(g, "total_ms", number_of(g, "total_ms") + hangs->total_ms);
  if (hangs->max_ms > number_of(g, "max_ms")) set_number(g, "max_ms", hangs->max_ms);
  if ((double)hangs->first_wall_ms < number_of(g, "first_wall_ms"))
    set_number(g, "first_wall_ms", (double)hangs->first_wall_ms);
  if ((double)hangs->last_wall_ms > number_of(g, "last_wall_ms"))
    set_number(g, "last_wall_ms", (double)hangs->last_wall_ms);
}

static void signature_list_build(void *arg) {
  hang_list_job *job = arg;
  cJSON *doc = cJSON_CreateObject();
  cJSON *groups = cJSON_AddArrayToObject(doc, "signatures");
  signature_totals totals = {.groups = groups};
  for (size_t i = 0; i < job->count && groups != NULL; i++) {
    cJSON *summary = summary_of(job->req->web->report_dir, job->entries[i].id);
    const cJSON *signature = member(summary, "signature");
    if (cJSON_IsString(signature)) {
      cJSON *g = group_of(groups, signature->valuestring);
      if (g == NULL) g = group_new(groups, summary);
      if (g != NULL) group_add(g, summary);
    } else if (summary != NULL) {
      totals.unsigned_hangs++;
    }
    if (summary != NULL) totals.reports++;
    cJSON_Delete(summary);
  }
  if (groups != NULL)
    lagscope__store_tally_read(job->req->web->report_dir, group_add_evicted, &totals);
  cJSON_AddNumberToObject(doc, "unsigned", totals.unsigned_hangs);
  cJSON_AddNumberToObject(doc, "hangs", totals.reports + totals.evicted);
  cJSON_AddNumberToObject(doc, "reports", totals.reports);
  cJSON_AddNumberToObject(doc, "evicted", totals.evicted);
  job->text = print(doc);
}

/* The answer when the reports cannot be read (rc: the store's code): 503 "unavailable" when the
 * store's checks refuse the report folder (another user's, writable by others, a link another
 * user made: the store writes nothing there either), the message saying why as the store's
 * error event did; 500 "internal" for anything else (out of memory, a read error). */
static int reports_unreadable(lagscope__web_request *req, int rc) {
  char why[256] = "", message[320];
  int fd = -1;
  int status = 503;
  if (rc == LAGSCOPE_ENOMEM ||
      lagscope__folder_open(req->web->report_dir, 0, &fd, why, sizeof(why)) == LAGSCOPE_OK) {
    if (fd >= 0) close(fd);
    snprintf(why, sizeof(why), "the reports could not be read: %s", lagscope_strerror(rc));
    status = 500;
  }
  /* The folder's path may hold a quote or a backslash: the message goes into JSON as it is. */
  size_t j = 0;
  for (size_t i = 0; why[i] != '\0' && j + 1 < sizeof(message); i++)
    message[j++] = why[i] == '"' || why[i] == '\\' || (unsigned char)why[i] < 0x20 ? '?' : why[i];
  message[j] = '\0';
  return lagscope__web_reply_error(req, status, status == 503 ? "unavailable" : "internal",
                                   message);
}

/* The stored reports listed, then build run over them on the parse thread: its answer. */
static int answer_from_store(lagscope__web_request *req, void (*build)(void *)) {
  lagscope__store_entry *entries = NULL;
  size_t count = 0;
  int listed = lagscope__store_list(req->web->report_dir, &entries, &count);
  if (listed != LAGSCOPE_OK) return reports_unreadable(req, listed);
  hang_list_job job = {.req = req, .entries = entries, .count = count};
  int rc = on_parse_thread(build, &job);
  lagscope__dealloc(entries);
  if (rc != LAGSCOPE_OK)
    return lagscope__web_reply_error(req, 503, "busy",
                                     "no thread could be started to read the reports");
  return lagscope__web_reply_json(req, 200, job.text);
}

int lagscope__web_api_hangs(lagscope__web_request *req) {
  return answer_from_store(req, hang_list_build);
}

/* GET /api/v1/signatures: every stored hang, grouped by signature, the group of the newest
 * hang first. */
int lagscope__web_api_signatures(lagscope__web_request *req) {
  return answer_from_store(req, signature_list_build);
}

typedef struct export_job {
  const char *text;   /* the stored report */
  int speedscope;     /* else a Chrome trace */
  char *exported;     /* lagscope_free; NULL when it failed */
} export_job;

static void export_build(void *arg) {
  export_job *job = arg;
  char why[256] = "";
  job->exported = job->speedscope ? lagscope__web_export_speedscope(job->text, why, sizeof(why))
                                  : lagscope__web_export_chrome_trace(job->text, why, sizeof(why));
}

/* GET /api/v1/hangs/{id}[/speedscope|/trace]: the stored text, or an export made from it. */
int lagscope__web_api_hang(lagscope__web_request *req) {
  char *text = NULL;
  size_t len = 0;
  int rc = lagscope__store_read(req->web->report_dir, req->route.id, &text, &len);
  /* A file the store would not keep (a link, a FIFO, another document, one past the store's
   * size bound, which the store never writes) is no report either. */
  if (rc == LAGSCOPE_ENOENT || rc == LAGSCOPE_EPARSE || rc == LAGSCOPE_ELIMIT)
    return lagscope__web_reply_error(req, 404, "not_found", "no such report");
  if (rc != LAGSCOPE_OK) return reports_unreadable(req, rc);
  if (req->route.kind == LAGSCOPE__WEB_ROUTE_HANG) {
    lagscope__web_reply reply = {.status = 200, .body = text, .length = len};
    rc = lagscope__web_reply_send(req, &reply);
    lagscope__dealloc(text);
    return rc;
  }
  export_job job = {.text = text,
                    .speedscope = req->route.kind == LAGSCOPE__WEB_ROUTE_HANG_SPEEDSCOPE};
  rc = on_parse_thread(export_build, &job);
  lagscope__dealloc(text);
  if (rc != LAGSCOPE_OK)
    return lagscope__web_reply_error(req, 503, "busy",
                                     "no thread could be started to read the report");
  char *exported = job.exported;
  int speedscope = job.speedscope;
  if (exported == NULL) return lagscope__web_reply_error(req, 500, "internal", "the export failed");
  char disposition[128];
  snprintf(disposition, sizeof(disposition), "attachment; filename=\"%s.%s.json\"", req->route.id,
           speedscope ? "speedscope" : "trace");
  lagscope__web_reply reply = {.status = 200, .body = exported, .length = strlen(exported),
                               .disposition = disposition};
  rc = lagscope__web_reply_send(req, &reply);
  lagscope_free(exported);
  return rc;
}

/* ---- capture ------------------------------------------------------------------------------------ */

/* 0 when a capture may start now; else the ms to wait. */
static uint64_t capture_wait_ms(lagscope__web *web) {
  uint64_t now = lagscope__now_ns(), wait = 0;
  pthread_mutex_lock(&web->capture_lock);
  if (web->last_capture_ns != 0 && now - web->last_capture_ns < CAPTURE_EVERY_NS)
    wait = (CAPTURE_EVERY_NS - (now - web->last_capture_ns) + NS_PER_MS - 1) / NS_PER_MS;
  else
    web->last_capture_ns = now;
  pthread_mutex_unlock(&web->capture_lock);
  return wait;
}

/* The second counts from the capture's end: one that took long (every thread of a busy app,
 * under load) is not followed by another at once. L */
static void capture_ended(lagscope__web *web) {
  pthread_mutex_lock(&web->capture_lock);
  web->last_capture_ns = lagscope__now_ns();
  pthread_mutex_unlock(&web->capture_lock);
}

int lagscope__web_api_capture(lagscope__web_request *req) {
  uint64_t wait_ms = capture_wait_ms(req->web);
  if (wait_ms > 0) {
    char body[160];
    snprintf(body, sizeof(body),
             "{\"error\":\"rate_limited\",\"message\":\"one capture a second\","
             "\"retry_after_ms\":%llu}", (unsigned long long)wait_ms);
    lagscope__web_reply reply = {.status = 429, .body = body, .length = strlen(body),
                                 .retry_after_s = (int)((wait_ms + 999) / 1000)};
    return lagscope__web_reply_send(req, &reply);
  }
  char *json = NULL;
  int rc = req->web->capture_now(&json, CAPTURE_TIMEOUT_NS);
  capture_ended(req->web);
  if (rc == LAGSCOPE_ETIMEDOUT)
    return lagscope__web_reply_error(req, 503, "busy", "the monitor did not answer in time");
  if (rc != LAGSCOPE_OK)
    return lagscope__web_reply_error(req, 500, "internal", lagscope_strerror(rc));
  lagscope__web_reply reply = {.status = 200, .body = json, .length = strlen(json)};
  rc = lagscope__web_reply_send(req, &reply);
  lagscope__dealloc(json); /* lagscope's heap: a capture of every thread can be megabytes */
  return rc;
}
