#ifndef BW_JSON_H
#define BW_JSON_H
#endif
