/* Forced (-include) into the library sources that tools/common compiles as
 * its own (tools/common/CMakeLists.txt): each asyncrt__ name becomes a tool_
 * one, so a static libasyncrt links beside asyncrt_tool_common without a
 * clash, and no tool reaches the library's internals by name. */
/* runtime/base/format.c: malloc'd printf, refusals (tool_format.h) */
#define asyncrt__format tool_format
#define asyncrt__vformat tool_vformat
#define asyncrt__say tool_say
#define asyncrt__refuse tool_refuse
/* runtime/base/safe_io.c: the checked file I/O (tool_io.h) */
#define asyncrt__dir_check_trusted tool_dir_check_trusted
#define asyncrt__dir_open_door tool_dir_open_door
#define asyncrt__dir_open_trusted tool_dir_open_trusted
#define asyncrt__file_lock tool_file_lock
#define asyncrt__file_read tool_file_read
#define asyncrt__file_read_private tool_file_read_private
#define asyncrt__file_write tool_file_write
#define asyncrt__mkdir_why tool_mkdir_why
#define asyncrt__private_dir_make tool_private_dir_make
#define asyncrt__private_dirs_sweep tool_private_dirs_sweep
#define asyncrt__safe_io_euid tool_safe_io_euid
#define asyncrt__trusted_executable tool_trusted_executable
