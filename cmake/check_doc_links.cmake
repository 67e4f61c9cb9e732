# Checks every relative Markdown link of the documentation: README.md, docs/, results/ and
# the READMEs of suite/, workloads/, baselines/, tests/ and examples/ (never tests/fixtures/).
# A link [text](target) whose target is not a URL (http:, https:, mailto:, ...) must name a
# file or folder that exists, relative to the Markdown file's folder, inside the repository;
# an anchor (target.md#heading, or #heading in the same file) must be one of that file's
# headings under GitHub's rule (lowercase; punctuation but '-' and '_' dropped; each space a
# '-'; a repeated heading gets -1, -2...). Links inside fenced code blocks and inline code
# are not links. A broken link stops with the file, the line, the link and what is missing.
#   cmake -DSOURCE_DIR=<repository> -P cmake/check_doc_links.cmake

cmake_minimum_required(VERSION 3.22)  # script mode: today's policies
if(NOT SOURCE_DIR)
  message(FATAL_ERROR "check_doc_links: give -DSOURCE_DIR=<the repository>")
endif()
get_filename_component(SOURCE_DIR "${SOURCE_DIR}" ABSOLUTE)

# Markdown is full of ';', '[' and ']', which CMake's lists treat specially: each is replaced
# by a control character before a file is split into lines, so that every line stays one
# list item, and the patterns below are written with those characters.
string(ASCII 1 LB)    # [
string(ASCII 2 RB)    # ]
string(ASCII 3 SEMI)  # ;
string(ASCII 4 BSL)   # backslash

# The lines of a file, one list item each, with the characters above replaced.
function(doc_lines file out)
  file(READ "${file}" text)
  string(REPLACE "\\" "${BSL}" text "${text}")
  string(REPLACE ";" "${SEMI}" text "${text}")
  string(REPLACE "[" "${LB}" text "${text}")
  string(REPLACE "]" "${RB}" text "${text}")
  string(REPLACE "\r" "" text "${text}")
  string(REPLACE "\n" ";" text "${text}")
  # Lines of fenced code blocks (and their fences) become empty: no heading or link there,
  # and every other line keeps its number.
  set(kept "")
  set(fenced FALSE)
  foreach(line IN LISTS text)
    if(line MATCHES "^[ \t]*(```|~~~)")
      if(fenced)
        set(fenced FALSE)
      else()
        set(fenced TRUE)
      endif()
      set(line "")
    elseif(fenced)
      set(line "")
    endif()
    list(APPEND kept "${line}")
  endforeach()
  set(${out} "${kept}" PARENT_SCOPE)
endfunction()

# A line as it was written, for messages.
function(doc_plain in out)
  string(REPLACE "${LB}" "[" s "${in}")
  string(REPLACE "${RB}" "]" s "${s}")
  string(REPLACE "${SEMI}" ";" s "${s}")
  string(REPLACE "${BSL}" "\\" s "${s}")
  set(${out} "${s}" PARENT_SCOPE)
endfunction()

# GitHub's anchor of a heading's text, two ways: keeping the non-ASCII letters (such as τ,
# which stay in GitHub's anchors) but dropping the usual non-ASCII symbols (— × ≤ …, which
# do not), and dropping every non-ASCII character.
function(doc_slugs heading out)
  string(STRIP "${heading}" h)
  string(REGEX REPLACE "[ \t]+#+$" "" h "${h}")                       # closing #s
  string(REGEX REPLACE "${LB}([^${RB}]*)${RB}\\([^)]*\\)" "\\1" h "${h}")  # [text](url) -> text
  string(REGEX REPLACE "<[^>]*>" "" h "${h}")                         # inline HTML tags
  string(TOLOWER "${h}" h)
  string(REPLACE "${LB}" "" h "${h}")
  string(REPLACE "${RB}" "" h "${h}")
  string(REPLACE "${SEMI}" "" h "${h}")
  string(REPLACE "${BSL}" "" h "${h}")
  string(REGEX REPLACE "[!\"#$%&'()*+,./:<=>?@^`{|}~]" "" h "${h}")
  string(REPLACE "\t" " " h "${h}")
  string(REGEX REPLACE "[^a-z0-9 _-]" "" ascii "${h}")
  foreach(symbol "—" "–" "−" "×" "…" "≤" "≥" "≈" "≠" "±" "·" "•" "→" "←" "↔" "√" "∞" "°" "’" "‘" "“" "”" "«" "»" "§" "€" "£")
    string(REPLACE "${symbol}" "" h "${h}")
  endforeach()
  string(REPLACE " " "-" h "${h}")
  string(REPLACE " " "-" ascii "${ascii}")
  set(${out} "${h}" "${ascii}" PARENT_SCOPE)
endfunction()

# Every anchor a Markdown file offers (both forms of each heading, with GitHub's -1, -2...
# for repeats, and any <a name="..."> or id="..."), cached per file.
function(doc_anchors file out)
  string(MAKE_C_IDENTIFIER "${file}" id)
  get_property(known GLOBAL PROPERTY doc_anchors_known_${id} SET)
  if(known)
    get_property(anchors GLOBAL PROPERTY doc_anchors_${id})
    set(${out} "${anchors}" PARENT_SCOPE)
    return()
  endif()
  doc_lines("${file}" lines)
  set(anchors "")
  foreach(line IN LISTS lines)
    if(line MATCHES "^ ? ? ?#+[ \t]+(.*)$")
      doc_slugs("${CMAKE_MATCH_1}" slugs)
      foreach(s IN LISTS slugs)
        set(candidate "${s}")
        set(n 0)
        while(candidate IN_LIST anchors)
          math(EXPR n "${n} + 1")
          set(candidate "${s}-${n}")
        endwhile()
        list(APPEND anchors "${candidate}")
      endforeach()
    endif()
    string(REGEX MATCHALL "(name|id)=\"[^\"]+\"" named "${line}")
    foreach(m IN LISTS named)
      string(REGEX REPLACE "^(name|id)=\"([^\"]+)\"$" "\\2" a "${m}")
      list(APPEND anchors "${a}")
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES anchors)
  set_property(GLOBAL PROPERTY doc_anchors_known_${id} TRUE)
  set_property(GLOBAL PROPERTY doc_anchors_${id} "${anchors}")
  set(${out} "${anchors}" PARENT_SCOPE)
endfunction()

# The Markdown files to check.
file(GLOB_RECURSE docs RELATIVE "${SOURCE_DIR}" LIST_DIRECTORIES false
     "${SOURCE_DIR}/docs/*.md" "${SOURCE_DIR}/results/*.md"
     "${SOURCE_DIR}/suite/README.md" "${SOURCE_DIR}/suite/*/README.md"
     "${SOURCE_DIR}/workloads/README.md" "${SOURCE_DIR}/workloads/*/README.md"
     "${SOURCE_DIR}/baselines/README.md" "${SOURCE_DIR}/baselines/*/README.md"
     "${SOURCE_DIR}/tests/README.md" "${SOURCE_DIR}/tests/*/README.md"
     "${SOURCE_DIR}/examples/README.md" "${SOURCE_DIR}/examples/*/README.md")
if(EXISTS "${SOURCE_DIR}/README.md")
  list(APPEND docs README.md)
endif()
list(FILTER docs EXCLUDE REGEX "^tests/fixtures/")
list(REMOVE_DUPLICATES docs)
list(SORT docs)
if(NOT docs)
  message(FATAL_ERROR "check_doc_links: no Markdown files found under ${SOURCE_DIR}")
endif()

set(problems "")
set(checked 0)
foreach(doc IN LISTS docs)
  get_filename_component(dir "${SOURCE_DIR}/${doc}" DIRECTORY)
  doc_lines("${SOURCE_DIR}/${doc}" lines)
  set(lineno 0)
  foreach(line IN LISTS lines)
    math(EXPR lineno "${lineno} + 1")
    string(REGEX REPLACE "``[^`]*``" "" line "${line}")  # inline code is not a link
    string(REGEX REPLACE "`[^`]*`" "" line "${line}")
    # Inline links and images: [text](target) and ![alt](target); reference definitions: [x]: target.
    string(REGEX MATCHALL "${RB}\\([^)]*\\)" targets "${line}")
    if(line MATCHES "^ ? ? ?${LB}[^${RB}]+${RB}:[ \t]+([^ \t]+)")
      list(APPEND targets "${RB}(${CMAKE_MATCH_1})")
    endif()
    foreach(t IN LISTS targets)
      string(REGEX REPLACE "^${RB}\\((.*)\\)$" "\\1" target "${t}")
      string(STRIP "${target}" target)
      string(REGEX REPLACE "[ \t]+(\"[^\"]*\"|'[^']*')$" "" target "${target}")  # a title
      string(REGEX REPLACE "^<(.*)>$" "\\1" target "${target}")
      if(target STREQUAL "" OR target MATCHES "^[A-Za-z][A-Za-z0-9+.-]*:")
        continue()  # empty, or a URL (http:, https:, mailto:, ...)
      endif()
      math(EXPR checked "${checked} + 1")
      doc_plain("${target}" shown)
      set(anchor "")
      set(path "${target}")
      if(target MATCHES "^([^#]*)#(.*)$")
        set(path "${CMAKE_MATCH_1}")
        set(anchor "${CMAKE_MATCH_2}")
      endif()
      string(REPLACE "%20" " " path "${path}")
      if(path STREQUAL "")
        set(file "${SOURCE_DIR}/${doc}")
      elseif(path MATCHES "^/")
        set(file "${SOURCE_DIR}${path}")
      else()
        set(file "${dir}/${path}")
      endif()
      get_filename_component(file "${file}" ABSOLUTE)
      file(RELATIVE_PATH rel "${SOURCE_DIR}" "${file}")
      if(rel MATCHES "^\\.\\.(/|$)" OR IS_ABSOLUTE "${rel}")
        string(APPEND problems "  ${doc}:${lineno}: ${shown} -> leaves the repository (${file})\n")
        continue()
      endif()
      if(NOT EXISTS "${file}")
        string(APPEND problems "  ${doc}:${lineno}: ${shown} -> no such file or folder: ${rel}\n")
        continue()
      endif()
      if(NOT anchor STREQUAL "" AND NOT IS_DIRECTORY "${file}" AND file MATCHES "\\.md$")
        doc_anchors("${file}" anchors)
        string(REPLACE "%20" "-" anchor "${anchor}")
        string(TOLOWER "${anchor}" wanted)
        if(NOT wanted IN_LIST anchors)
          string(APPEND problems "  ${doc}:${lineno}: ${shown} -> ${rel} has no heading with the anchor #${anchor}\n")
        endif()
      endif()
    endforeach()
  endforeach()
endforeach()

list(LENGTH docs ndocs)
if(problems)
  message(FATAL_ERROR "check_doc_links: links that do not resolve (a path is relative to the Markdown file's "
                      "folder; an anchor is a heading's GitHub anchor: lowercase, punctuation dropped, spaces as '-'):\n${problems}")
endif()
message(STATUS "check_doc_links: ${checked} relative links in ${ndocs} Markdown files resolve")
