# The Apple port (iOS, macOS), included by the top-level CMakeLists.txt in its APPLE branch,
# after project() and after LAGSCOPE_ENABLE is known.
#
#   cmake -S . -B build-ios -G Xcode -DCMAKE_SYSTEM_NAME=iOS -DCMAKE_OSX_DEPLOYMENT_TARGET=15.0
#   cmake -S . -B build-mac -G Xcode -DCMAKE_OSX_ARCHITECTURES="arm64;x86_64"
#
# It sets, for the top level to use:
#   lagscope_port_sources       core/darwin/*.c (macho.c: the Mach-O symbolicator)
#   lagscope_hud_sources        the portable HUD, the CoreGraphics canvas, the on-screen glue
#   lagscope_apple_frameworks   the system frameworks to link, as "-framework NAME" items
#   lagscope_apple_pc_libs      the same for lagscope.pc's Libs.private
# and, with LAGSCOPE_ENABLE, the targets `cjson` and `lagscope_civetweb` (an INTERFACE target
# over whichever civetweb was used), found on the system or fetched at pinned releases.
# lagscope_apple_fetched_dependencies is ON when either was fetched: their static archives
# then live in the build tree, and scripts/make-xcframework merges them into liblagscope.a.

if(CMAKE_SYSTEM_NAME STREQUAL "iOS")
  set(lagscope_apple_ui_framework UIKit)
else()
  set(lagscope_apple_ui_framework AppKit)
endif()

# ---- sources ------------------------------------------------------------------------------------
# One file per concern under core/darwin/: a new one is picked up without editing this list
# (CONFIGURE_DEPENDS: the build notices a file added or removed).
file(GLOB lagscope_darwin_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/core/darwin/*.c)
set(lagscope_port_sources ${lagscope_darwin_sources}) # with macho.c, the Mach-O symbolicator

file(GLOB lagscope_hud_darwin_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/hud/darwin/*.c)
set(lagscope_hud_sources hud/layout.c hud/renderer.c hud/consumer.c hud/coregraphics_canvas.c
  ${lagscope_hud_darwin_sources})

# ---- system frameworks -------------------------------------------------------------------------
# Foundation and libobjc come with UIKit/AppKit; CoreFoundation, CoreGraphics and CoreText are
# called directly; QuartzCore provides CALayer, CATransaction and CADisplayLink, which lagscope
# looks up by name at run time and so does not reference at link time.
set(lagscope_apple_frameworks)
set(lagscope_apple_pc_libs)
foreach(framework CoreFoundation CoreGraphics CoreText QuartzCore ${lagscope_apple_ui_framework})
  list(APPEND lagscope_apple_frameworks "-framework ${framework}")
  string(APPEND lagscope_apple_pc_libs " -framework ${framework}")
endforeach()
list(APPEND lagscope_apple_frameworks objc)
string(APPEND lagscope_apple_pc_libs " -lobjc")

# ---- cJSON and civetweb -------------------------------------------------------------------------
# A system copy (Homebrew's, say) is built for one Mac's architecture; an xcframework needs every
# slice built from source, so scripts/make-xcframework turns this on.
option(LAGSCOPE_FETCH_DEPENDENCIES
  "Apple: always fetch cJSON and civetweb, never use a system copy" OFF)
set(lagscope_apple_fetched_dependencies OFF)
if(LAGSCOPE_ENABLE)
  include(FetchContent)
  # cJSON v1.7.18 and civetweb v1.16 ask for CMake policies older than 3.5, which CMake 4
  # refuses unless told the oldest it may assume (older CMakes ignore this variable).
  set(CMAKE_POLICY_VERSION_MINIMUM 3.5)

  # Third-party code is not held to lagscope's warnings: clear the -Wall -Wextra -Werror a
  # target inherits from this directory, and give back the compiler extensions the top level
  # turns off for lagscope's own code.
  function(lagscope_apple_quiet target)
    set_property(TARGET ${target} PROPERTY COMPILE_OPTIONS "")
    set_property(TARGET ${target} PROPERTY C_EXTENSIONS ON)
    set_property(TARGET ${target} PROPERTY POSITION_INDEPENDENT_CODE ON)
  endfunction()

  # lagscope includes <cjson/cJSON.h>, the path an installed cJSON has; a fetched cJSON keeps
  # its header at the top of its source tree, so the header is copied into that layout.
  if(NOT LAGSCOPE_FETCH_DEPENDENCIES)
    find_package(cJSON CONFIG QUIET)
  endif()
  if(NOT TARGET cjson)
    set(ENABLE_CJSON_TEST OFF CACHE BOOL "" FORCE)
    set(ENABLE_CJSON_UTILS OFF CACHE BOOL "" FORCE)
    set(ENABLE_CUSTOM_COMPILER_FLAGS OFF CACHE BOOL "" FORCE)
    set(ENABLE_TARGET_EXPORT OFF CACHE BOOL "" FORCE)
    set(ENABLE_CJSON_UNINSTALL OFF CACHE BOOL "" FORCE)
    set(BUILD_SHARED_AND_STATIC_LIBS OFF CACHE BOOL "" FORCE)
    set(CJSON_OVERRIDE_BUILD_SHARED_LIBS ON CACHE BOOL "" FORCE)
    set(CJSON_BUILD_SHARED_LIBS OFF CACHE BOOL "" FORCE) # one static archive to merge
    FetchContent_Declare(lagscope_cjson
      GIT_REPOSITORY https://github.com/DaveGamble/cJSON.git
      GIT_TAG v1.7.18
      GIT_SHALLOW TRUE)
    FetchContent_MakeAvailable(lagscope_cjson)
    lagscope_apple_quiet(cjson)
    set(lagscope_cjson_include ${CMAKE_CURRENT_BINARY_DIR}/lagscope-deps/include)
    configure_file(${lagscope_cjson_SOURCE_DIR}/cJSON.h ${lagscope_cjson_include}/cjson/cJSON.h
      COPYONLY)
    target_include_directories(cjson INTERFACE $<BUILD_INTERFACE:${lagscope_cjson_include}>)
    set(lagscope_apple_fetched_dependencies ON)
    message(STATUS "lagscope: cJSON v1.7.18 fetched")
  endif()

  add_library(lagscope_civetweb INTERFACE)
  if(NOT LAGSCOPE_FETCH_DEPENDENCIES)
    find_path(CIVETWEB_INCLUDE_DIR civetweb.h)
    find_library(CIVETWEB_LIBRARY civetweb)
  endif()
  if(CIVETWEB_INCLUDE_DIR AND CIVETWEB_LIBRARY AND NOT LAGSCOPE_FETCH_DEPENDENCIES)
    target_include_directories(lagscope_civetweb SYSTEM INTERFACE ${CIVETWEB_INCLUDE_DIR})
    target_link_libraries(lagscope_civetweb INTERFACE ${CIVETWEB_LIBRARY})
  else()
    # The C library alone: no TLS (the viewer is plain HTTP on the LAN, guarded by a token),
    # no WebSockets (the live stream is server-sent events), no CGI (no fork on iOS), no
    # server executable, no C++ wrapper, no tests, no sanitizers forced into Debug.
    set(CIVETWEB_ENABLE_SSL OFF CACHE BOOL "" FORCE)
    set(CIVETWEB_ENABLE_WEBSOCKETS OFF CACHE BOOL "" FORCE)
    set(CIVETWEB_DISABLE_CGI ON CACHE BOOL "" FORCE)
    set(CIVETWEB_ENABLE_SERVER_EXECUTABLE OFF CACHE BOOL "" FORCE)
    set(CIVETWEB_INSTALL_EXECUTABLE OFF CACHE BOOL "" FORCE)
    set(CIVETWEB_ENABLE_CXX OFF CACHE BOOL "" FORCE)
    set(CIVETWEB_BUILD_TESTING OFF CACHE BOOL "" FORCE)
    set(CIVETWEB_ENABLE_ASAN OFF CACHE BOOL "" FORCE)
    set(CIVETWEB_ENABLE_LUA OFF CACHE BOOL "" FORCE)
    set(CIVETWEB_ENABLE_DUKTAPE OFF CACHE BOOL "" FORCE)
    set(CIVETWEB_ENABLE_ZLIB OFF CACHE BOOL "" FORCE)
    set(CIVETWEB_ALLOW_WARNINGS ON CACHE BOOL "" FORCE)
    FetchContent_Declare(lagscope_civetweb_src
      GIT_REPOSITORY https://github.com/civetweb/civetweb.git
      GIT_TAG v1.16
      GIT_SHALLOW TRUE)
    FetchContent_MakeAvailable(lagscope_civetweb_src)
    lagscope_apple_quiet(civetweb-c-library)
    target_include_directories(lagscope_civetweb SYSTEM INTERFACE
      ${lagscope_civetweb_src_SOURCE_DIR}/include)
    target_link_libraries(lagscope_civetweb INTERFACE civetweb-c-library)
    set(lagscope_apple_fetched_dependencies ON)
    set(lagscope_civetweb_fetched ON)
    message(STATUS "lagscope: civetweb v1.16 fetched (C library only, no SSL)")
  endif()

  # Private names for what was fetched and merged into lagscope's library: every cJSON_ and
  # mg_ function becomes lagscope__cJSON_... / lagscope__mg_... in cJSON, civetweb and
  # lagscope alike (a force-included header made from their own headers), so that an app or
  # SDK that bundles either links without a clash and without mixing versions. A system copy
  # keeps its names: it is linked, not merged.
  set(lagscope_private_headers "")
  if(lagscope_cjson_SOURCE_DIR)
    list(APPEND lagscope_private_headers ${lagscope_cjson_SOURCE_DIR}/cJSON.h)
  endif()
  if(lagscope_civetweb_fetched)
    list(APPEND lagscope_private_headers ${lagscope_civetweb_src_SOURCE_DIR}/include/civetweb.h)
  endif()
  if(lagscope_private_headers)
    set(LAGSCOPE_PRIVATE_NAMES_HEADER
      ${CMAKE_CURRENT_BINARY_DIR}/lagscope-deps/include/lagscope_private_names.h)
    execute_process(
      COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/scripts/private-names ${lagscope_private_headers}
      OUTPUT_FILE ${LAGSCOPE_PRIVATE_NAMES_HEADER} RESULT_VARIABLE lagscope_private_rc)
    if(NOT lagscope_private_rc EQUAL 0)
      message(FATAL_ERROR "lagscope: scripts/private-names failed on ${lagscope_private_headers}")
    endif()
    foreach(target cjson civetweb-c-library)
      if(TARGET ${target})
        get_target_property(lagscope_imported ${target} IMPORTED)
        if(NOT lagscope_imported)
          target_compile_options(${target} PRIVATE "SHELL:-include ${LAGSCOPE_PRIVATE_NAMES_HEADER}")
        endif()
      endif()
    endforeach()
  endif()
endif()
