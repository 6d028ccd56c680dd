// asyncrt device library: placeholder until issue 4 lands.
#pragma once
