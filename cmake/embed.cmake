# Writes OUT, a C file holding each of FILES (a ;-list) as a string named
# "<PREFIX><file name>" (PREFIX defaults to "asyncrt/"), for the runtime to
# hand to NVRTC, in a table named <SYMBOL>_files (SYMBOL defaults to
# asyncrt__embedded) of type TYPE (asyncrt_embedded_file), declared in
# HEADER (embedded.h). Run with cmake -P.
if(NOT DEFINED PREFIX)
  set(PREFIX "asyncrt/")
endif()
if(NOT DEFINED SYMBOL)
  set(SYMBOL asyncrt__embedded)
endif()
if(NOT DEFINED TYPE)
  set(TYPE asyncrt_embedded_file)
endif()
if(NOT DEFINED HEADER)
  set(HEADER embedded.h)
endif()
set(body "#include \"${HEADER}\"\n#include <string.h>\n\n")
set(table "")
set(index 0)
foreach(path IN LISTS FILES)
  get_filename_component(name "${path}" NAME)
  file(READ "${path}" hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," hex "${hex}")
  string(APPEND body "static const char file_${index}[] = {${hex}0x00};\n")
  string(APPEND table "    {\"${PREFIX}${name}\", file_${index}},\n")
  math(EXPR index "${index} + 1")
endforeach()
string(APPEND body "\nconst ${TYPE} ${SYMBOL}_files[] = {\n${table}    {0, 0}\n};\n")
string(APPEND body "const size_t ${SYMBOL}_file_count = ${index};\n\n")
string(APPEND body "const char *${SYMBOL}_find(const char *name)\n{\n"
  "    for (size_t i = 0; i < ${SYMBOL}_file_count; i++)\n"
  "        if (strcmp(${SYMBOL}_files[i].name, name) == 0) return ${SYMBOL}_files[i].content;\n"
  "    return NULL;\n}\n")
file(WRITE "${OUT}.tmp" "${body}")
file(RENAME "${OUT}.tmp" "${OUT}")
