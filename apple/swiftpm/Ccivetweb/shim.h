/* The header web/civetweb_calls.h includes, found through pkg-config's -I (Package.swift). */
#include <civetweb.h>
