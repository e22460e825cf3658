# Writes the list of consumers this build plugs into the core (core/deliver/dispatcher.c), so that
# core/ names none of them: started in this order, stopped in the reverse. Included by
# CMakeLists.txt, and run by tests/builds/darwin/check:
#   cmake -DOUTPUT=consumers.c [-DFOR_APPLE=ON] [-DX11_OVERLAY=ON] -P consumers.cmake
if(NOT OUTPUT)
  message(FATAL_ERROR "consumers.cmake: give -DOUTPUT=...")
endif()

# hud/consumer.c, web/consumer.c, web/push.c (the push to a Pushgateway at stop)
set(consumers lagscope__hud_consumer lagscope__viewer_consumer lagscope__push_consumer)
if(FOR_APPLE)
  list(APPEND consumers lagscope__hud_overlay_consumer) # hud/darwin/overlay.c
endif()
if(X11_OVERLAY)
  list(APPEND consumers lagscope__hud_x11_consumer) # hud/linux/x11_overlay.c
endif()

set(declarations "")
set(pointers "")
foreach(consumer ${consumers})
  string(APPEND declarations "extern const lagscope__consumer ${consumer};\n")
  string(APPEND pointers "&${consumer}, ")
endforeach()
file(CONFIGURE OUTPUT ${OUTPUT} CONTENT
  "/* Made by cmake/consumers.cmake: the consumers this build plugs into the core. */
#include \"internal.h\"

${declarations}
const lagscope__consumer *const lagscope__consumers[] = {${pointers}NULL};
")
