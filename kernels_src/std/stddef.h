// asyncrt built-in <stddef.h>: see <cstddef>.
#pragma once
#include <cstddef>
