/* Names and sentences for codes and enums, generated from the lists in lagscope.h. */
#include "lagscope.h"

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
