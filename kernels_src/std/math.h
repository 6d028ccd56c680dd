// asyncrt built-in <math.h>: see <cmath>.
#pragma once
#include <cmath>
