// asyncrt built-in <stdlib.h>: see <cstdlib>.
#pragma once
#include <cstdlib>
