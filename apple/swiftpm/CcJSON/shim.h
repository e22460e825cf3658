/* The header web/cjson_calls.h includes, found through pkg-config's -I (Package.swift). */
#include <cjson/cJSON.h>
