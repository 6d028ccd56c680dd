// asyncrt built-in <assert.h>: see <cassert>.
#include <cassert>
