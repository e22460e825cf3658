/* The civetweb functions the viewer calls. Included by web/ files instead of <civetweb.h>.
 *
 * Where the build sets LAGSCOPE_CIVETWEB_SONAME (Linux), civetweb is not linked: it is loaded
 * when the viewer meets its first client (lagscope__civetweb_load, web/libraries.c), and
 * each mg_ name below stands for its entry in a table filled then. A linked library's start-up
 * code alone makes the kernel map 64 KiB of its code into the app, with its data: ~100 KiB of
 * civetweb in every app that no browser ever looks at. Elsewhere (Apple, civetweb merged into
 * the library) the names are civetweb's own and loading does nothing. */
#ifndef LAGSCOPE_CIVETWEB_CALLS_H
#define LAGSCOPE_CIVETWEB_CALLS_H

#include <civetweb.h>
#include <stddef.h>

/* Makes the functions below callable; 0, or LAGSCOPE_ESYS with why. Call before any of them;
 * once loaded, civetweb stays for the life of the process. L: the dynamic loader's. */
int lagscope__civetweb_load(char *why, size_t why_size);

#define LAGSCOPE__CIVETWEB_CALLS(XX)                                                          \
  XX(mg_init_library) XX(mg_exit_library) XX(mg_start2) XX(mg_stop)                          \
  XX(mg_set_request_handler) XX(mg_get_context) XX(mg_get_user_data)                         \
  XX(mg_get_request_info) XX(mg_get_header) XX(mg_get_server_ports) XX(mg_read) XX(mg_write) \
  XX(mg_response_header_start) XX(mg_response_header_add) XX(mg_response_header_send)

#if defined(LAGSCOPE_CIVETWEB_SONAME)
#include "../core/port.h" /* LAGSCOPE__LAZY_TABLE */

typedef LAGSCOPE__LAZY_TABLE(LAGSCOPE__CIVETWEB_CALLS) lagscope__civetweb_table;
extern lagscope__civetweb_table lagscope__civetweb;

#define mg_init_library (lagscope__civetweb.call.mg_init_library)
#define mg_exit_library (lagscope__civetweb.call.mg_exit_library)
#define mg_start2 (lagscope__civetweb.call.mg_start2)
#define mg_stop (lagscope__civetweb.call.mg_stop)
#define mg_set_request_handler (lagscope__civetweb.call.mg_set_request_handler)
#define mg_get_context (lagscope__civetweb.call.mg_get_context)
#define mg_get_user_data (lagscope__civetweb.call.mg_get_user_data)
#define mg_get_request_info (lagscope__civetweb.call.mg_get_request_info)
#define mg_get_header (lagscope__civetweb.call.mg_get_header)
#define mg_get_server_ports (lagscope__civetweb.call.mg_get_server_ports)
#define mg_read (lagscope__civetweb.call.mg_read)
#define mg_write (lagscope__civetweb.call.mg_write)
#define mg_response_header_start (lagscope__civetweb.call.mg_response_header_start)
#define mg_response_header_add (lagscope__civetweb.call.mg_response_header_add)
#define mg_response_header_send (lagscope__civetweb.call.mg_response_header_send)
#endif

#endif
