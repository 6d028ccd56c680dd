// asyncrt built-in <string.h>: see <cstring>.
#pragma once
#include <cstring>
