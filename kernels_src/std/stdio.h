// asyncrt built-in <stdio.h>: see <cstdio>.
#pragma once
#include <cstdio>
