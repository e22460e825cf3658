/* Names and sentences for codes and enums, generated from the lists in lagscope.h. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>

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
    case LAGSCOPE_EVENT_HANG_BEGAN: return "hang_began";
    case LAGSCOPE_EVENT_HANG_ENDED: return "hang_ended";
    case LAGSCOPE_EVENT_METRICS: return "metrics";
    case LAGSCOPE_EVENT_ERROR: return "error";
    case LAGSCOPE_EVENT_HANG_RECOVERED: return "hang_recovered";
    case LAGSCOPE_EVENT_HANG_SAMPLE: return "hang_sample";
    case LAGSCOPE_EVENT_SERVER_STARTED: return "server_started";
    case LAGSCOPE_EVENT_HITCH: return "hitch";
  }
  return "unknown";
}

const char *lagscope_hitch_band_name(int band) {
  switch (band) {
    case LAGSCOPE_HITCH_GOOD: return "good";
    case LAGSCOPE_HITCH_WARNING: return "warning";
    case LAGSCOPE_HITCH_CRITICAL: return "critical";
    case LAGSCOPE_HITCH_BAD: return "bad";
  }
  return "unknown";
}

const char *lagscope__walk_name(int walk) {
  switch (walk) {
    case LAGSCOPE__WALK_COMPLETE: return "complete";
    case LAGSCOPE__WALK_TRUNCATED: return "truncated";
    case LAGSCOPE__WALK_BAD_FRAME: return "bad_frame";
    case LAGSCOPE__WALK_NO_REPLY: return "no_reply";
    case LAGSCOPE__WALK_EXITED: return "exited";
    case LAGSCOPE__WALK_OWN: return "own";
  }
  return "unknown";
}

const char *lagscope__method_name(int method) {
  switch (method) {
    case LAGSCOPE__METHOD_NONE: return "none";
    case LAGSCOPE__METHOD_SIGNAL: return "signal";
    case LAGSCOPE__METHOD_BLOCKED: return "blocked";
    case LAGSCOPE__METHOD_SUSPEND: return "suspend";
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
