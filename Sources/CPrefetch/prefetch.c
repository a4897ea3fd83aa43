// SwiftPM builds a C target from at least one source file; the module's one function is `static inline` in
// include/bw_prefetch.h.
#include "bw_prefetch.h"
