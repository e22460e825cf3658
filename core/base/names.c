/* Names and sentences for codes and enums, generated from the lists in lagscope.h. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

unsigned lagscope_version(void) { return LAGSCOPE_VERSION_HEX; }

const char *lagscope_strerror(int code) {
  switch (code) {
    case LAGSCOPE_OK: return "success";
#define LAGSCOPE_ERROR_TEXT_(name, value, text) \
    case LAGSCOPE_##name: return text;
    LAGSCOPE_ERROR_MAP(LAGSCOPE_ERROR_TEXT_)
#undef LAGSCOPE_ERROR_TEXT_
  }
  return "unknown error";
}

const char *lagscope_error_name(int code) {
  switch (code) {
    case LAGSCOPE_OK: return "OK";
#define LAGSCOPE_ERROR_NAME_(name, value, text) \
    case LAGSCOPE_##name: return #name;
    LAGSCOPE_ERROR_MAP(LAGSCOPE_ERROR_NAME_)
#undef LAGSCOPE_ERROR_NAME_
  }
  return "UNKNOWN";
}

const char *lagscope_event_type_name(int type) {
  switch (type) {
#define LAGSCOPE_EVENT_NAME_(name, value, text) \
  case LAGSCOPE_EVENT_##name: return text;
    LAGSCOPE_EVENT_TYPES(LAGSCOPE_EVENT_NAME_)
#undef LAGSCOPE_EVENT_NAME_
  }
  return "unknown";
}

/* The event types are numbered from 1 to their count (the switch above refuses a value used
 * twice), so that counting the list gives the largest: what sizes an array by type (the tests'
 * recorder, bench_stream). */
#define LAGSCOPE_EVENT_ONE_(name, value, text) +1
enum { EVENT_TYPE_COUNT = 0 LAGSCOPE_EVENT_TYPES(LAGSCOPE_EVENT_ONE_) };
#undef LAGSCOPE_EVENT_ONE_
#define LAGSCOPE_EVENT_NUMBERED_(name, value, text)                    \
  _Static_assert((value) >= 1 && (value) <= EVENT_TYPE_COUNT,           \
                 "LAGSCOPE_EVENT_" #name ": event types are numbered 1..their count");
LAGSCOPE_EVENT_TYPES(LAGSCOPE_EVENT_NUMBERED_)
#undef LAGSCOPE_EVENT_NUMBERED_

const char *lagscope_hitch_band_name(int band) {
  switch (band) {
#define LAGSCOPE_HITCH_BAND_NAME_(name, text, floor_ms_per_s) \
  case LAGSCOPE_HITCH_##name: return text;
    LAGSCOPE_HITCH_BANDS(LAGSCOPE_HITCH_BAND_NAME_)
#undef LAGSCOPE_HITCH_BAND_NAME_
  }
  return "unknown";
}

const char *lagscope__report_state_name(int state) {
  switch (state) {
#define LAGSCOPE__REPORT_STATE_NAME_(name, text) \
  case LAGSCOPE__REPORT_##name: return text;
    LAGSCOPE__REPORT_STATES(LAGSCOPE__REPORT_STATE_NAME_)
#undef LAGSCOPE__REPORT_STATE_NAME_
  }
  return NULL;
}

int lagscope__report_state_of(const char *name) {
  for (int state = 0; name != NULL && state < LAGSCOPE__REPORT_STATE_COUNT; state++)
    if (strcmp(name, lagscope__report_state_name(state)) == 0) return state;
  return -1;
}

const char *lagscope__walk_name(int walk) {
  switch (walk) {
#define LAGSCOPE__WALK_NAME_(name, text) \
  case LAGSCOPE__WALK_##name: return text;
    LAGSCOPE__WALKS(LAGSCOPE__WALK_NAME_)
#undef LAGSCOPE__WALK_NAME_
  }
  return "unknown";
}

const char *lagscope__method_name(int method) {
  switch (method) {
#define LAGSCOPE__METHOD_NAME_(name, text) \
  case LAGSCOPE__METHOD_##name: return text;
    LAGSCOPE__METHODS(LAGSCOPE__METHOD_NAME_)
#undef LAGSCOPE__METHOD_NAME_
  }
  return "unknown";
}

void lagscope__explain(char *why, size_t why_size, const char *format, ...) {
  if (why == NULL || why_size == 0) return;
  va_list args;
  va_start(args, format);
  vsnprintf(why, why_size, format, args);
  va_end(args);
}
