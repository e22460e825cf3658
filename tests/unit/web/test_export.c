/* The exports (web/export.c) from a hand-written report with a clear answer
 * (report-timeline.json): six samples 10 ms apart from t = 250 ms, three in main→a→b→spin,
 * two in main→a→c→(libc+0x2f00)→__poll, one with no frame; the hang lasts 305 ms. */
#include "cases.h"
#include "check.h"
#include "cjson_calls.h"
#include "web.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#ifndef FIXTURE_DIR
#define FIXTURE_DIR "tests/unit/web" /* run from the repository's root */
#endif

#define WALL_US 1712311872000000.0 /* start.wall_ms in microseconds */

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  CHECK_MSG(f != NULL, "cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  rewind(f);
  char *text = malloc((size_t)size + 1);
  CHECK(text != NULL && fread(text, 1, (size_t)size, f) == (size_t)size);
  text[size] = '\0';
  fclose(f);
  return text;
}

static cJSON *fixture(void) {
  char *text = read_file(FIXTURE_DIR "/report-timeline.json");
  cJSON *report = cJSON_Parse(text);
  CHECK(report != NULL);
  free(text);
  return report;
}

typedef char *(*export_fn)(const char *, char *, size_t);

/* Exports the report (consumed) and parses the result. */
static cJSON *export_json(export_fn fn, cJSON *report) {
  char *text = cJSON_PrintUnformatted(report), why[256] = "";
  cJSON_Delete(report);
  char *out = fn(text, why, sizeof why);
  CHECK_MSG(out != NULL, "export failed: %s", why);
  cJSON *doc = cJSON_Parse(out);
  CHECK_MSG(doc != NULL, "export is not JSON: %.200s", out);
  lagscope_free(out);
  free(text);
  return doc;
}

static cJSON *at(const cJSON *object, const char *path) { /* "a.b.c" */
  char key[64];
  const cJSON *item = object;
  while (item != NULL && *path != '\0') {
    size_t n = strcspn(path, ".");
    CHECK(n < sizeof key);
    memcpy(key, path, n);
    key[n] = '\0';
    item = cJSON_GetObjectItemCaseSensitive(item, key);
    path += n + (path[n] == '.');
  }
  CHECK_MSG(item != NULL, "no %s", path);
  return (cJSON *)item;
}

static double number_at(const cJSON *o, const char *path) {
  cJSON *item = at(o, path);
  CHECK_MSG(cJSON_IsNumber(item), "%s is not a number", path);
  return item->valuedouble;
}

static const char *string_at(const cJSON *o, const char *path) {
  cJSON *item = at(o, path);
  CHECK_MSG(cJSON_IsString(item), "%s is not a string", path);
  return item->valuestring;
}

/* The array as "[0,1,2]" text, to compare whole arrays in one check. */
static void expect_array(const cJSON *array, const char *expected) {
  char *text = cJSON_PrintUnformatted(array);
  CHECK_MSG(strcmp(text, expected) == 0, "%s, expected %s", text, expected);
  free(text);
}

static void set_number(cJSON *object, const char *path, double value) {
  cJSON_SetNumberValue(at(object, path), value);
}

/* ---- speedscope ---- */

static const char *const FRAMES = "[{\"name\":\"main\"},{\"name\":\"a\"},{\"name\":\"b\"},"
    "{\"name\":\"spin\",\"file\":\"demo.c\",\"line\":42},{\"name\":\"c\"},"
    "{\"name\":\"0x2f00 (libc.so.6)\"},{\"name\":\"__poll\"}]";

static void test_speedscope_timeline(void) {
  cJSON *doc = export_json(lagscope__web_export_speedscope, fixture());
  CHECK(strcmp(string_at(doc, "$schema"), "https://www.speedscope.app/file-format-schema.json") == 0);
  expect_array(at(doc, "shared.frames"), FRAMES);
  CHECK_EQ_INT(cJSON_GetArraySize(at(doc, "profiles")), 1);
  cJSON *profile = cJSON_GetArrayItem(at(doc, "profiles"), 0);
  CHECK(strcmp(string_at(profile, "type"), "sampled") == 0);
  CHECK(strcmp(string_at(profile, "name"),
               "main thread \xe2\x80\x94 hang 20240405T101112.000Z-4242-1") == 0);
  CHECK(strcmp(string_at(profile, "unit"), "milliseconds") == 0);
  CHECK_EQ_INT(number_at(profile, "startValue"), 0);
  CHECK_EQ_INT(number_at(profile, "endValue"), 305);
  expect_array(at(profile, "samples"), "[[0,1,2,3],[0,1,2,3],[0,1,2,3],[0,1,4,5,6],[0,1,4,5,6],[]]");
  /* Each sample until the next; the last one interval, cut at the hang's end (300 + 5). */
  expect_array(at(profile, "weights"), "[10,10,10,10,10,5]");
  cJSON_Delete(doc);
}

static void test_speedscope_last_weight(void) {
  cJSON *report = fixture();
  set_number(report, "duration_ms", 400);
  cJSON *doc = export_json(lagscope__web_export_speedscope, report);
  expect_array(at(cJSON_GetArrayItem(at(doc, "profiles"), 0), "weights"), "[10,10,10,10,10,10]");
  CHECK_EQ_INT(number_at(cJSON_GetArrayItem(at(doc, "profiles"), 0), "endValue"), 400);
  cJSON_Delete(doc);
  /* A report written while the hang lasted may end at its last sample: weight 0, and
   * endValue never below the samples'. Times out of order never go backwards. */
  report = fixture();
  set_number(report, "duration_ms", 300);
  cJSON *t = at(report, "samples.timeline.t_ms");
  cJSON_SetNumberValue(cJSON_GetArrayItem(t, 2), 255.5);
  doc = export_json(lagscope__web_export_speedscope, report);
  cJSON *profile = cJSON_GetArrayItem(at(doc, "profiles"), 0);
  expect_array(at(profile, "weights"), "[10,0,20,10,10,0]");
  CHECK_EQ_INT(number_at(profile, "endValue"), 300);
  cJSON_Delete(doc);
}

/* Without ids and timeline (reports written before they existed): the call tree, one sample
 * per node that ran code, self x interval. */
static void strip_ids(cJSON *node) {
  cJSON_DeleteItemFromObjectCaseSensitive(node, "id");
  cJSON *child;
  cJSON_ArrayForEach(child, cJSON_GetObjectItemCaseSensitive(node, "children")) strip_ids(child);
}

static cJSON *fixture_without_timeline(void) {
  cJSON *report = fixture();
  cJSON_DeleteItemFromObjectCaseSensitive(at(report, "samples"), "timeline");
  strip_ids(at(report, "call_tree"));
  return report;
}

static void test_speedscope_tree(void) {
  cJSON *doc = export_json(lagscope__web_export_speedscope, fixture_without_timeline());
  expect_array(at(doc, "shared.frames"), FRAMES);
  cJSON *profile = cJSON_GetArrayItem(at(doc, "profiles"), 0);
  expect_array(at(profile, "samples"), "[[],[0,1,2,3],[0,1,4,5,6]]");
  expect_array(at(profile, "weights"), "[10,30,20]");
  CHECK_EQ_INT(number_at(profile, "endValue"), 305);
  cJSON_Delete(doc);
}

/* Frames are one per function and module, wherever they are in the tree; unknown functions
 * by module offset, or by address without a module. */
static void test_speedscope_frame_identity(void) {
  const char *report =
      "{\"schema_version\":1,\"id\":\"x\",\"duration_ms\":30,\"sample_interval_ms\":10,"
      "\"call_tree\":{\"function\":\"(all samples)\",\"self\":0,\"children\":["
      "{\"function\":\"f\",\"module\":\"/m1\",\"self\":1,\"children\":["
      " {\"function\":\"f\",\"module\":\"/m1\",\"self\":1,\"children\":[]},"
      " {\"function\":\"f\",\"module\":\"/m2\",\"self\":1,\"children\":[]}]},"
      "{\"function\":null,\"module\":null,\"address\":\"0xdead\",\"self\":1,\"children\":["
      " {\"function\":null,\"module\":null,\"address\":\"0xdead\",\"self\":1,\"children\":[]},"
      " {\"function\":null,\"module\":\"/lib/m3.so\",\"module_offset\":\"0x10\",\"self\":1}]}]}}";
  char why[128];
  char *text = lagscope__web_export_speedscope(report, why, sizeof why);
  CHECK_MSG(text != NULL, "%s", why);
  cJSON *doc = cJSON_Parse(text);
  expect_array(at(doc, "shared.frames"),
               "[{\"name\":\"f\"},{\"name\":\"f\"},{\"name\":\"0xdead\"},"
               "{\"name\":\"0x10 (m3.so)\"}]");
  expect_array(at(cJSON_GetArrayItem(at(doc, "profiles"), 0), "samples"),
               "[[0],[0,0],[0,1],[2],[2,2],[2,3]]");
  cJSON_Delete(doc);
  lagscope_free(text);
}

/* ---- Chrome trace ---- */

/* The n-th event of that phase and category ("" for any category). */
static cJSON *event(const cJSON *doc, const char *ph, const char *cat, int n) {
  cJSON *e;
  cJSON_ArrayForEach(e, at(doc, "traceEvents")) {
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(e, "cat");
    if (strcmp(string_at(e, "ph"), ph) != 0) continue;
    if (cat[0] != '\0' && !(cJSON_IsString(c) && strcmp(c->valuestring, cat) == 0)) continue;
    if (n-- == 0) return e;
  }
  return NULL;
}

static int count_events(const cJSON *doc, const char *ph, const char *cat) {
  int n = 0;
  while (event(doc, ph, cat, n) != NULL) n++;
  return n;
}

typedef struct expected_x {
  const char *name;
  double ts_ms, dur_ms; /* from the hang's start */
} expected_x;

static void expect_stack_events(const cJSON *doc, const expected_x *expected, int count) {
  CHECK_EQ_INT(count_events(doc, "X", "stack"), count);
  for (int i = 0; i < count; i++) {
    cJSON *e = event(doc, "X", "stack", i);
    CHECK_MSG(strcmp(string_at(e, "name"), expected[i].name) == 0, "event %d is %s, expected %s", i,
              string_at(e, "name"), expected[i].name);
    CHECK_MSG(number_at(e, "ts") == WALL_US + expected[i].ts_ms * 1000, "%s: ts %.0f",
              expected[i].name, number_at(e, "ts") - WALL_US);
    CHECK_MSG(number_at(e, "dur") == expected[i].dur_ms * 1000, "%s: dur %.0f", expected[i].name,
              number_at(e, "dur"));
    CHECK_EQ_INT(number_at(e, "pid"), 4242);
    CHECK_EQ_INT(number_at(e, "tid"), 100);
  }
}

static void test_trace_metadata(const cJSON *doc) {
  CHECK(strcmp(string_at(doc, "displayTimeUnit"), "ms") == 0);
  CHECK(strcmp(string_at(doc, "otherData.report_id"), "20240405T101112.000Z-4242-1") == 0);
  CHECK(strcmp(string_at(doc, "otherData.app"), "demo") == 0);
  cJSON *process = event(doc, "M", "", 0), *main = event(doc, "M", "", 1);
  CHECK(strcmp(string_at(process, "name"), "process_name") == 0);
  CHECK(strcmp(string_at(process, "args.name"), "demo") == 0);
  CHECK_EQ_INT(number_at(process, "pid"), 4242);
  CHECK(strcmp(string_at(main, "name"), "thread_name") == 0);
  CHECK(strcmp(string_at(main, "args.name"), "demo") == 0);
  CHECK_EQ_INT(number_at(main, "tid"), 100);
  cJSON *io = event(doc, "M", "", 3); /* after the main thread's sort index */
  CHECK(strcmp(string_at(io, "name"), "thread_name") == 0);
  CHECK(strcmp(string_at(io, "args.name"), "io") == 0);
  CHECK_EQ_INT(number_at(io, "tid"), 101);
  CHECK_EQ_INT(count_events(doc, "M", ""), 4); /* the main thread named once */
}

static void test_trace_timeline(void) {
  cJSON *doc = export_json(lagscope__web_export_chrome_trace, fixture());
  test_trace_metadata(doc);
  cJSON *hang = event(doc, "X", "hang", 0);
  CHECK(strcmp(string_at(hang, "name"), "hang 305 ms") == 0);
  CHECK(number_at(hang, "ts") == WALL_US && number_at(hang, "dur") == 305000);
  CHECK_EQ_INT(number_at(hang, "tid"), 100);
  /* Samples at 250..290 merge where they share frames; the no-frame sample at 300 closes all. */
  static const expected_x stacks[] = {
      {"main", 250, 50}, {"a", 250, 50},  {"b", 250, 30},    {"spin", 250, 30},
      {"c", 280, 20},    {"0x2f00 (libc.so.6)", 280, 20},   {"__poll", 280, 20}};
  expect_stack_events(doc, stacks, 7);
  cJSON *spin = event(doc, "X", "stack", 3);
  CHECK(strcmp(string_at(spin, "args.file"), "demo.c") == 0 && number_at(spin, "args.line") == 42);
  CHECK(strcmp(string_at(spin, "args.module"), "/usr/bin/demo") == 0);
  CHECK(strcmp(string_at(spin, "args.module_offset"), "0x5010") == 0);
  /* The other thread's stack at the start, innermost first; the main thread's is in the Xs. */
  CHECK_EQ_INT(count_events(doc, "i", ""), 1);
  cJSON *io = event(doc, "i", "", 0);
  CHECK(number_at(io, "tid") == 101 && number_at(io, "ts") == WALL_US);
  CHECK(strcmp(string_at(io, "s"), "t") == 0);
  expect_array(at(io, "args.stack"), "[\"__poll\",\"0x2f00 (libc.so.6)\",\"0xdead0000\"]");
  cJSON_Delete(doc);
}

/* The same frame again after another stack is a new event: merging is by the whole path. */
static void test_trace_unmerge(void) {
  cJSON *report = fixture();
  cJSON *nodes = at(report, "samples.timeline.node");
  cJSON_SetNumberValue(cJSON_GetArrayItem(nodes, 1), 7);
  cJSON_SetNumberValue(cJSON_GetArrayItem(nodes, 2), 4);
  cJSON_SetNumberValue(cJSON_GetArrayItem(nodes, 5), 4); /* [4,7,4,7,7,4]: ends in spin */
  cJSON *doc = export_json(lagscope__web_export_chrome_trace, report);
  static const expected_x stacks[] = {
      {"main", 250, 55}, {"a", 250, 55},   {"b", 250, 10},   {"spin", 250, 10},
      {"c", 260, 10},    {"0x2f00 (libc.so.6)", 260, 10},    {"__poll", 260, 10},
      {"b", 270, 10},    {"spin", 270, 10}, {"c", 280, 20},
      {"0x2f00 (libc.so.6)", 280, 20},     {"__poll", 280, 20}, {"b", 300, 5}, {"spin", 300, 5}};
  expect_stack_events(doc, stacks, 14);
  cJSON_Delete(doc);
}

static void test_trace_tree(void) {
  cJSON *doc = export_json(lagscope__web_export_chrome_trace, fixture_without_timeline());
  CHECK(strcmp(string_at(doc, "otherData.samples_from"), "call_tree") == 0);
  static const expected_x stacks[] = {
      {"main", 10, 50}, {"a", 10, 50}, {"b", 10, 30}, {"spin", 10, 30},
      {"c", 40, 20},    {"0x2f00 (libc.so.6)", 40, 20}, {"__poll", 40, 20}};
  expect_stack_events(doc, stacks, 7);
  cJSON_Delete(doc);
}

/* ---- bad input ---- */

static void expect_refused(const char *report, const char *mentions) {
  export_fn fns[] = {lagscope__web_export_speedscope, lagscope__web_export_chrome_trace};
  for (int i = 0; i < 2; i++) {
    char why[256] = "";
    CHECK(fns[i](report, why, sizeof why) == NULL);
    CHECK_MSG(strstr(why, mentions) != NULL, "\"%s\" lacks \"%s\"", why, mentions);
    CHECK(fns[i](report, NULL, 0) == NULL); /* no buffer for why: still safe */
  }
}

static void test_refusals(void) {
  expect_refused(NULL, "not valid JSON");
  expect_refused("", "not valid JSON");
  expect_refused("{\"schema_version\":1,", "not valid JSON");
  expect_refused("[1,2]", "not a JSON object");
  expect_refused("{\"call_tree\":{}}", "schema_version");
  expect_refused("{\"schema_version\":2,\"call_tree\":{}}", "schema_version");
  expect_refused("{\"schema_version\":\"1\",\"call_tree\":{}}", "schema_version");
  expect_refused("{\"schema_version\":1}", "call_tree");
  expect_refused("{\"schema_version\":1,\"call_tree\":[]}", "call_tree");
  const char *ids = "{\"schema_version\":1,\"call_tree\":{\"id\":0,\"children\":["
                    "{\"id\":2,\"children\":[]},{\"id\":1}]}}";
  expect_refused(ids, "preorder");
  static const char *const timelines[] = {
      "{\"t_ms\":[1,2],\"node\":[0]}", "{\"t_ms\":[1],\"node\":[1]}", "{\"t_ms\":[1],\"node\":[-1]}",
      "{\"t_ms\":[1],\"node\":[0.5]}", "{\"t_ms\":[\"1\"],\"node\":[0]}", "{\"node\":[0]}", "[]"};
  for (size_t i = 0; i < sizeof timelines / sizeof timelines[0]; i++) {
    char report[256];
    snprintf(report, sizeof report,
             "{\"schema_version\":1,\"samples\":{\"timeline\":%s},\"call_tree\":{}}", timelines[i]);
    expect_refused(report, "timeline");
  }
}

/* The least a report can be, and absurd numbers: exports still made, nothing overflows. */
static void test_odd_reports(void) {
  static const char *const reports[] = {
      "{\"schema_version\":1,\"call_tree\":{}}",
      "{\"schema_version\":1,\"call_tree\":{\"children\":[1,\"x\",null,{}]},\"threads\":[1,{}]}",
      ("{\"schema_version\":1,\"duration_ms\":-5,\"sample_interval_ms\":1e300,"
       "\"start\":{\"wall_ms\":1e300},"
       "\"samples\":{\"timeline\":{\"t_ms\":[1e300,-1e300,0],\"node\":[0,1,1]}},"
       "\"call_tree\":{\"self\":1e300,\"children\":[{\"self\":1e300}]}}"),
      ("{\"schema_version\":1,\"sample_interval_ms\":1e300,\"duration_ms\":1e300,"
       "\"call_tree\":{\"self\":1e300,\"children\":[{\"self\":1e300},{\"self\":-3}]}}")};
  for (size_t i = 0; i < sizeof reports / sizeof reports[0]; i++) {
    char why[128] = "";
    char *a = lagscope__web_export_speedscope(reports[i], why, sizeof why);
    char *b = lagscope__web_export_chrome_trace(reports[i], why, sizeof why);
    CHECK_MSG(a != NULL && b != NULL, "report %zu: %s", i, why);
    cJSON *doc = cJSON_Parse(a);
    cJSON *weight;
    cJSON_ArrayForEach(weight, at(cJSON_GetArrayItem(at(doc, "profiles"), 0), "weights"))
      CHECK(weight->valuedouble >= 0);
    cJSON_Delete(doc);
    lagscope_free(a);
    lagscope_free(b);
  }
}

static const test_case cases[] = {
    TEST_CASE(speedscope_timeline),
    TEST_CASE(speedscope_last_weight),
    TEST_CASE(speedscope_tree),
    TEST_CASE(speedscope_frame_identity),
    TEST_CASE(trace_timeline),
    TEST_CASE(trace_unmerge),
    TEST_CASE(trace_tree),
    TEST_CASE(refusals),
    TEST_CASE(odd_reports),
};

int main(int argc, char **argv) {
  char why[256];
  CHECK_MSG(lagscope__cjson_load(why, sizeof why) == LAGSCOPE_OK, "%s", why); /* the viewer's */
  return run_test_case(argc, argv, cases, CASE_COUNT(cases));
}
