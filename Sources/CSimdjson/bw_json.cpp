#include "bw_json.h"
#include <simdjson.h>
