// asyncrt built-in <limits.h>: see <climits>.
#pragma once
#include <climits>
