// asyncrt built-in <stdint.h>: see <cstdint>.
#pragma once
#include <cstdint>
