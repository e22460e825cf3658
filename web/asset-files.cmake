# The viewer's files: every file of assets/ of a kind the viewer serves (the kinds whose content
# type web/embed-assets.cmake knows). One list for the build (CMakeLists.txt) and for the checks
# that compile web/ on their own (tests/fuzz/run-fuzz, tests/builds/darwin/check, through
# embed-assets.cmake's ASSETS_DIR), so a file added to assets/ is embedded and routed everywhere.
# assets/package.json is not one: it only tells node that the .js files are ES modules, for
# the viewer's unit tests (tests/unit/viewer/).
set(LAGSCOPE_ASSET_PATTERNS *.html *.css *.js *.svg *.png)

# Sets out to the full paths of dir's viewer files, sorted. In a project (not cmake -P) the glob
# is CONFIGURE_DEPENDS: a file added or removed makes the next build configure again.
function(lagscope_asset_files dir out)
  set(globs "")
  foreach(pattern IN LISTS LAGSCOPE_ASSET_PATTERNS)
    list(APPEND globs "${dir}/${pattern}")
  endforeach()
  if(CMAKE_SCRIPT_MODE_FILE)
    file(GLOB files LIST_DIRECTORIES false ${globs})
  else()
    file(GLOB files LIST_DIRECTORIES false CONFIGURE_DEPENDS ${globs})
  endif()
  list(SORT files)
  set(${out} "${files}" PARENT_SCOPE)
endfunction()
