/* The cJSON functions lagscope calls. Included by the files that call them instead of
 * <cjson/cJSON.h>.
 *
 * Only the viewer's API parses and builds cJSON trees (reports and events are written as text,
 * core/base/json_writer.c), so where the build sets LAGSCOPE_CJSON_SONAME (Linux) cJSON is not linked:
 * it is loaded with civetweb when the viewer meets its first client (lagscope__cjson_load,
 * web/libraries.c), and each cJSON_ name below stands for its entry in a table
 * filled then. Linked, its start-up alone kept 32 KiB of its pages in every app that no browser
 * ever looks at; looked up in its own library, an app's own cJSON (another version, linked in)
 * cannot stand in for it either. Elsewhere (Apple, cJSON merged into the library) the names
 * are cJSON's own and loading does nothing. */
#ifndef LAGSCOPE_CJSON_CALLS_H
#define LAGSCOPE_CJSON_CALLS_H

#include <cjson/cJSON.h>
#include <stddef.h>

/* Makes the functions below callable; 0, or LAGSCOPE_ESYS with why. Call before any of them
 * (the viewer: at its first client, with civetweb); once loaded, cJSON stays for the life of
 * the process. L: the dynamic loader's. */
int lagscope__cjson_load(char *why, size_t why_size);

#define LAGSCOPE__CJSON_CALLS(XX)                                                            \
  XX(cJSON_Parse) XX(cJSON_ParseWithLength) XX(cJSON_PrintUnformatted) XX(cJSON_Delete)      \
  XX(cJSON_Duplicate) XX(cJSON_GetArraySize) XX(cJSON_GetObjectItemCaseSensitive)            \
  XX(cJSON_IsArray) XX(cJSON_IsObject) XX(cJSON_IsNumber) XX(cJSON_IsString) XX(cJSON_IsTrue) \
  XX(cJSON_CreateObject) XX(cJSON_CreateArray) XX(cJSON_CreateNull) XX(cJSON_CreateNumber)   \
  XX(cJSON_CreateString) XX(cJSON_CreateRaw) XX(cJSON_AddItemToObject)                       \
  XX(cJSON_AddItemToArray) XX(cJSON_AddObjectToObject) XX(cJSON_AddArrayToObject)           \
  XX(cJSON_AddStringToObject) XX(cJSON_AddNumberToObject) XX(cJSON_AddBoolToObject)         \
  XX(cJSON_AddNullToObject) XX(cJSON_AddRawToObject)

#if defined(LAGSCOPE_CJSON_SONAME)
#include "../core/port.h" /* LAGSCOPE__LAZY_TABLE */

typedef LAGSCOPE__LAZY_TABLE(LAGSCOPE__CJSON_CALLS) lagscope__cjson_table;
extern lagscope__cjson_table lagscope__cjson;

#define cJSON_Parse (lagscope__cjson.call.cJSON_Parse)
#define cJSON_ParseWithLength (lagscope__cjson.call.cJSON_ParseWithLength)
#define cJSON_PrintUnformatted (lagscope__cjson.call.cJSON_PrintUnformatted)
#define cJSON_Delete (lagscope__cjson.call.cJSON_Delete)
#define cJSON_Duplicate (lagscope__cjson.call.cJSON_Duplicate)
#define cJSON_GetArraySize (lagscope__cjson.call.cJSON_GetArraySize)
#define cJSON_GetObjectItemCaseSensitive (lagscope__cjson.call.cJSON_GetObjectItemCaseSensitive)
#define cJSON_IsArray (lagscope__cjson.call.cJSON_IsArray)
#define cJSON_IsObject (lagscope__cjson.call.cJSON_IsObject)
#define cJSON_IsNumber (lagscope__cjson.call.cJSON_IsNumber)
#define cJSON_IsString (lagscope__cjson.call.cJSON_IsString)
#define cJSON_IsTrue (lagscope__cjson.call.cJSON_IsTrue)
#define cJSON_CreateObject (lagscope__cjson.call.cJSON_CreateObject)
#define cJSON_CreateArray (lagscope__cjson.call.cJSON_CreateArray)
#define cJSON_CreateNull (lagscope__cjson.call.cJSON_CreateNull)
#define cJSON_CreateNumber (lagscope__cjson.call.cJSON_CreateNumber)
#define cJSON_CreateString (lagscope__cjson.call.cJSON_CreateString)
#define cJSON_CreateRaw (lagscope__cjson.call.cJSON_CreateRaw)
#define cJSON_AddItemToObject (lagscope__cjson.call.cJSON_AddItemToObject)
#define cJSON_AddItemToArray (lagscope__cjson.call.cJSON_AddItemToArray)
#define cJSON_AddObjectToObject (lagscope__cjson.call.cJSON_AddObjectToObject)
#define cJSON_AddArrayToObject (lagscope__cjson.call.cJSON_AddArrayToObject)
#define cJSON_AddStringToObject (lagscope__cjson.call.cJSON_AddStringToObject)
#define cJSON_AddNumberToObject (lagscope__cjson.call.cJSON_AddNumberToObject)
#define cJSON_AddBoolToObject (lagscope__cjson.call.cJSON_AddBoolToObject)
#define cJSON_AddNullToObject (lagscope__cjson.call.cJSON_AddNullToObject)
#define cJSON_AddRawToObject (lagscope__cjson.call.cJSON_AddRawToObject)
#endif

#endif
