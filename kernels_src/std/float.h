// asyncrt built-in <float.h>: see <cfloat>.
#pragma once
#include <cfloat>
