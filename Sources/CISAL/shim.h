// Intel ISA-L's CRC functions (Debian libisal-dev): crc32_iscsi is CRC-32C, with the SSE4.2 and carry-less
// multiply versions chosen at run time.
#include <isa-l/crc.h>
