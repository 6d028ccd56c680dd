# Writes OUT, a C file holding each of FILES (a ;-list) as a string named
# "asyncrt/<file name>", for the runtime to hand to NVRTC. Run with cmake -P.
set(body "#include \"embedded.h\"\n#include <string.h>\n\n")
set(table "")
set(index 0)
foreach(path IN LISTS FILES)
  get_filename_component(name "${path}" NAME)
  file(READ "${path}" hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," hex "${hex}")
  string(APPEND body "static const char file_${index}[] = {${hex}0x00};\n")
  string(APPEND table "    {\"asyncrt/${name}\", file_${index}},\n")
  math(EXPR index "${index} + 1")
endforeach()
string(APPEND body "\nconst asyncrt_embedded_file asyncrt_embedded_files[] = {\n${table}    {0, 0}\n};\n")
string(APPEND body "const size_t asyncrt_embedded_file_count = ${index};\n\n")
string(APPEND body "const char *asyncrt_embedded_find(const char *name)\n{\n"
  "    for (size_t i = 0; i < asyncrt_embedded_file_count; i++)\n"
  "        if (strcmp(asyncrt_embedded_files[i].name, name) == 0) return asyncrt_embedded_files[i].content;\n"
  "    return NULL;\n}\n")
file(WRITE "${OUT}.tmp" "${body}")
file(RENAME "${OUT}.tmp" "${OUT}")
