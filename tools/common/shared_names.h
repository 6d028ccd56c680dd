/* Forced (-include) into the library sources that tools/common compiles as
 * its own (tools/common/CMakeLists.txt): each asyncrt__ name becomes a tool_
 * one, so a static libasyncrt links beside asyncrt_tool_common without a
 * clash, and no tool reaches the library's internals by name. */
#define asyncrt__format tool_format
#define asyncrt__vformat tool_vformat
#define asyncrt__say tool_say
#define asyncrt__refuse tool_refuse
