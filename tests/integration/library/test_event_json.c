/* lagscope_event_json: each type of event as one line of valid JSON with its fields. */
#include "check.h"
#include "host_loop.h"
#include "http.h" /* the viewer's metrics ticks */
#include "internal.h"

#include <cjson/cJSON.h>
#include <string.h>

static cJSON *parse(const lagscope_event *e) {
  char *text = lagscope_event_json(e);
  CHECK(text != NULL);
  CHECK(strchr(text, '\n') == NULL);
  cJSON *o = cJSON_Parse(text);
  CHECK(o != NULL);
  lagscope_free(text);
  return o;
}

static const char *string_of(cJSON *o, const char *name) {
  cJSON *item = cJSON_GetObjectItemCaseSensitive(o, name);
  CHECK(cJSON_IsString(item));
  return item->valuestring;
}

static double number_of(cJSON *o, const char *name) {
  cJSON *item = cJSON_GetObjectItemCaseSensitive(o, name);
  CHECK(cJSON_IsNumber(item));
  return item->valuedouble;
}

int main(void) {
  lagscope_event e;
  memset(&e, 0, sizeof(e));
  e.type = LAGSCOPE_EVENT_HANG_ENDED;
  e.sequence = 7;
  e.as.hang_ended.hang_id = 3;
  e.as.hang_ended.start_ns = 9007199254740993ull; /* 2^53 + 1: must survive exactly */
  e.as.hang_ended.duration_ns = 612300000;
  cJSON *o = parse(&e);
  CHECK(strcmp(string_of(o, "type"), "hang_ended") == 0);
  CHECK_EQ_INT(number_of(o, "hang_id"), 3);
  CHECK_NEAR(number_of(o, "duration_ms"), 612.3, 1e-9);
  char *text = lagscope_event_json(&e);
  CHECK(strstr(text, "\"start_ns\":9007199254740993") != NULL);
  lagscope_free(text);
  cJSON_Delete(o);

  memset(&e, 0, sizeof(e));
  e.type = LAGSCOPE_EVENT_HANG_BEGAN;
  e.as.hang_began.threshold_ms = 250;
  e.as.hang_began.start_wall_ms = -5;
  o = parse(&e);
  CHECK(strcmp(string_of(o, "type"), "hang_began") == 0);
  CHECK_EQ_INT(number_of(o, "threshold_ms"), 250);
  CHECK_EQ_INT(number_of(o, "start_wall_ms"), -5);
  cJSON_Delete(o);

  memset(&e, 0, sizeof(e));
  e.type = LAGSCOPE_EVENT_ERROR;
  e.as.error.code = LAGSCOPE_EPROC;
  e.payload.message = "sampler: cannot \"open\"\n /proc";
  o = parse(&e);
  CHECK(strcmp(string_of(o, "code"), "EPROC") == 0);
  CHECK(strcmp(string_of(o, "message"), e.payload.message) == 0);
  cJSON_Delete(o);

  /* A real metrics event from a running monitor. */
  static lagscope_metrics m;
  lagscope_config c = lagscope_config_default();
  c.server_port = 0, c.server_bind = "127.0.0.1"; /* the viewer: loopback, any free port */
  c.usage_interval_ms = 50;
  CHECK_EQ_INT(lagscope_start(&c), 0);
  uint64_t deadline = test_now_ns() + 5000000000u;
  while (lagscope_metrics_latest(&m) != 0 && test_now_ns() < deadline) {
    lagscope_frame();
    test_stall_busy(5);
  }
  CHECK_EQ_INT(lagscope_stop(), 0);
  memset(&e, 0, sizeof(e));
  e.type = LAGSCOPE_EVENT_METRICS;
  e.payload.metrics = &m;
  o = parse(&e);
  CHECK(strcmp(string_of(o, "type"), "metrics") == 0);
  CHECK(number_of(o, "rss_bytes") > 0);
  CHECK(number_of(o, "thread_count") >= 3);
  CHECK(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(o, "busiest_threads")));
  CHECK(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(o, "recent_frame_ms")));
  cJSON *hist = cJSON_GetObjectItemCaseSensitive(o, "frame_histogram");
  CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(hist, "counts")),
               LAGSCOPE_FRAME_HISTOGRAM_BUCKETS);
  CHECK(strcmp(string_of(o, "hitch_band"), "good") == 0 ||
        strcmp(string_of(o, "hitch_band"), "warning") == 0 ||
        strcmp(string_of(o, "hitch_band"), "critical") == 0 ||
        strcmp(string_of(o, "hitch_band"), "bad") == 0);
  /* Its tick (the viewer's older ticks) says the same, but for the three arrays. */
  e.sequence = 9007199254740993ull;
  e.time_ns = 123456789;
  m.frames.idle = 1, m.hang_in_progress = 1, m.frames.band = LAGSCOPE_HITCH_CRITICAL;
  cJSON_Delete(o);
  o = parse(&e);
  lagscope__web_metrics_tick tick;
  lagscope__web_metrics_tick_of(&e, &tick);
  char *tick_text = lagscope__web_metrics_tick_text(&tick);
  CHECK(tick_text != NULL && strstr(tick_text, "\"seq\":9007199254740993,") != NULL);
  cJSON *tick_json = cJSON_Parse(tick_text);
  lagscope__dealloc(tick_text);
  CHECK(tick_json != NULL);
  cJSON_DeleteItemFromObjectCaseSensitive(o, "busiest_threads");
  cJSON_DeleteItemFromObjectCaseSensitive(o, "recent_frame_ms");
  cJSON_DeleteItemFromObjectCaseSensitive(o, "frame_histogram");
  CHECK_EQ_INT(cJSON_GetArraySize(tick_json), cJSON_GetArraySize(o));
  CHECK_MSG(cJSON_Compare(tick_json, o, 1), "the tick %s is not the event %s",
            cJSON_PrintUnformatted(tick_json), cJSON_PrintUnformatted(o));
  CHECK(strcmp(string_of(tick_json, "hitch_band"), "critical") == 0);
  CHECK(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(tick_json, "idle")));
  CHECK(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(tick_json, "hang_in_progress")));
  cJSON_Delete(tick_json);
  cJSON_Delete(o);
  printf("event_json: ok\n");
  return 0;
}
