// A thin C API over simdjson's On-Demand parser for Boardwalk's event reader.
//
// The C++ side walks one JSON object per call, recognises the keys Boardwalk knows (every alias),
// and fills a flat table of slots: what type each value had, where it started, and its scalar value.
// A plain valid line is walked over simdjson's stage-1 index directly (bw_fast.h); every other line, and
// every error, goes through simdjson On-Demand (bw_walker.h), with the same slots either way.
// Strings (unescaped, valid UTF-8) point into the line itself when they hold no escape, else into the
// parser's own buffer; they stay valid until the next call on the same parser or a change to the line. Everything about meaning (shapes, kinds, ranges) is decided in Swift.
#ifndef BW_JSON_H
#define BW_JSON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Bytes that must be readable after the last byte of a line handed to `bw_parse` (SIMDJSON_PADDING).
#define BW_PADDING 64

/// Message levels: 0 is the line's object, 1 its `event` object, 2 that object's `event` object.
#define BW_LEVELS 3
/// Slot ids per level.
#define BW_SLOTS_PER_LEVEL 64

/// The type of a slot's value.
enum bw_type {
    BW_ABSENT = 0,
    BW_NULL = 1,
    BW_FALSE = 2,
    BW_TRUE = 3,
    BW_INT = 4,      ///< `i` holds it
    BW_UINT = 5,     ///< an integer above INT64_MAX; `i` holds its bits
    BW_DOUBLE = 6,   ///< `d` holds it (a number with a fraction or an exponent)
    BW_STRING = 7,   ///< `s`/`len`
    BW_OBJECT = 8,   ///< a known object's fields are in their own slots; others were skipped
    BW_ARRAY = 9,    ///< for value slots: `i` is the first choice index, `len` the element count
};

/// Slot ids inside one level. The comments give the JSON path relative to the level's object.
enum bw_slot_id {
    BW_S_TYPE = 0,          ///< type
    BW_S_KIND = 1,          ///< kind
    BW_S_ID = 2,            ///< id (the bridge's envelope id, e.g. onboarding_on_close_action)
    BW_S_NAME = 3,          ///< name
    BW_S_ACTION_ID = 4,     ///< action_id | actionId
    BW_S_ELEMENT_ID = 5,    ///< element_id | elementId
    BW_S_ELEMENT_TYPE = 6,  ///< element_type | elementType
    BW_S_VALUE = 7,         ///< value
    BW_S_REPLY = 8,         ///< reply
    BW_S_TIMESTAMP = 9,     ///< timestamp | ts | created_at | received_at | createdAt | receivedAt
    BW_S_SESSION_ID = 10,   ///< session_id | sessionId
    BW_S_PROFILE_ID = 11,   ///< profile_id | profileId
    BW_S_EVENT_ID = 12,     ///< event_id | eventId
    BW_S_PLACEMENT_ID = 13, ///< placement_id | placementId
    BW_S_VARIATION_ID = 14, ///< variation_id | variationId
    BW_S_META = 15,         ///< meta
    BW_S_PARAMS = 16,       ///< params
    BW_S_ACTION = 17,       ///< action
    BW_S_VIEW = 18,         ///< view
    BW_S_ERROR = 19,        ///< error
    BW_S_EVENT = 20,        ///< event (its fields are the next level)
    BW_S_META_ONBOARDING_ID = 21,  ///< meta.onboarding_id | onboardingId
    BW_S_META_SCREEN_CID = 22,     ///< meta.screen_cid | screenClientId
    BW_S_META_SCREEN_INDEX = 23,   ///< meta.screen_index | screenIndex
    BW_S_META_TOTAL_SCREENS = 24,  ///< meta.total_screens | screensTotal | totalScreens
    BW_S_PARAMS_TYPE = 25,         ///< params.type
    BW_S_PARAMS_VALUE = 26,        ///< params.value
    BW_S_PARAMS_ELEMENT_ID = 27,   ///< params.element_id | elementId
    BW_S_PARAMS_REPLY = 28,        ///< params.reply
    BW_S_ACTION_ELEMENT_ID = 29,   ///< action.element_id | elementId
    BW_S_ACTION_ELEMENT_TYPE = 30, ///< action.element_type | elementType
    BW_S_ACTION_VALUE = 31,        ///< action.value
    BW_S_ACTION_ACTION_ID = 32,    ///< action.action_id | actionId
    BW_S_VIEW_ID = 33,             ///< view.id
    BW_S_VIEW_PLACEMENT_ID = 34,   ///< view.placement_id | placementId
    BW_S_VIEW_VARIATION_ID = 35,   ///< view.variation_id | variationId
    BW_S_ERROR_DOMAIN = 36,        ///< error.domain
    BW_S_ERROR_CODE = 37,          ///< error.code | adapty_code
    BW_S_ERROR_MESSAGE = 38,       ///< error.message
    BW_S_ERROR_DETAIL = 39,        ///< error.detail
    /// The fields of the three value objects (`value`, `params.value`, `action.value`), seven each,
    /// starting at BW_S_VALUE_FIELDS + 7 * n: id, value, label, type, day, month, year.
    BW_S_VALUE_FIELDS = 40,
    BW_S_COUNT = 61,
};

/// Offsets of the value-object fields from their base.
enum bw_value_field {
    BW_VF_ID = 0, BW_VF_VALUE = 1, BW_VF_LABEL = 2, BW_VF_TYPE = 3, BW_VF_DAY = 4, BW_VF_MONTH = 5, BW_VF_YEAR = 6,
};

/// One recognised value.
typedef struct bw_slot {
    const char *s;    ///< BW_STRING: the unescaped bytes (valid UTF-8, may contain NUL), in the line or the parser
    int64_t i;        ///< BW_INT / BW_UINT; BW_ARRAY: first choice index
    double d;         ///< BW_DOUBLE
    uint32_t len;     ///< BW_STRING: byte count; BW_ARRAY: element count
    uint32_t offset;  ///< byte offset of the value's first byte in the line
    uint32_t key_offset; ///< byte offset of the key's opening quote
    uint8_t type;     ///< enum bw_type
    uint8_t alias;    ///< which spelling of the key was used (index into the Swift-side table)
} bw_slot;

/// One element of a multi-select array: the element itself (`self`) and its three string fields.
typedef struct bw_choice {
    bw_slot self, id, value, label;
} bw_choice;

/// What went wrong, when `bw_parse` fails.
enum bw_error {
    BW_OK = 0,
    BW_E_SIMDJSON = 1,       ///< simdjson reported `simdjson_error`
    BW_E_NOT_OBJECT = 2,     ///< the top level is not an object (`slot.type` of `error_slot` 0 tells what it is)
    BW_E_DUPLICATE = 3,      ///< `error_slot` was given twice (two spellings count as one key)
    BW_E_STRING_TOO_LONG = 4,
    BW_E_TOO_MANY_CHOICES = 5,
    BW_E_TRAILING = 6,       ///< something follows the object
    BW_E_BAD_ESCAPE = 7,     ///< an escape produced a lone surrogate
    BW_E_CHOICE_DUPLICATE = 8, ///< a multi-select element repeats a key; `error_slot` is the choice index
};

typedef struct bw_status {
    int32_t error;          ///< enum bw_error
    int32_t simdjson_error; ///< simdjson::error_code when error == BW_E_SIMDJSON
    int64_t error_offset;   ///< byte offset in the line, or -1 when unknown
    int32_t error_slot;     ///< level * BW_SLOTS_PER_LEVEL + slot id, for BW_E_DUPLICATE
    int32_t error_alias;    ///< the spelling used the second time, for BW_E_DUPLICATE
    int32_t root_type;      ///< enum bw_type of the top-level value
    uint32_t choice_count;  ///< choices used in this line
    uint64_t present[BW_LEVELS]; ///< bit n of present[l]: slot n of level l was given
} bw_status;

typedef struct bw_parser bw_parser;

/// Makes a parser. Limits: the longest line, the deepest nesting (simdjson's max depth), the longest
/// string value in bytes, the most multi-select elements in one line. Returns NULL when out of memory.
bw_parser *bw_parser_create(size_t max_line, size_t max_depth, size_t max_string, size_t max_choices);
void bw_parser_destroy(bw_parser *parser);

/// Parses one line. `capacity` is how many bytes starting at `line` are readable; it must be at least
/// `len + BW_PADDING` (the padding bytes may hold anything, e.g. the next lines).
bw_status bw_parse(bw_parser *parser, const uint8_t *line, size_t len, size_t capacity);

/// The slots of the last parse: BW_LEVELS * BW_SLOTS_PER_LEVEL of them. Only slots whose bit is set in
/// `present` hold values from the last parse.
const bw_slot *bw_slots(const bw_parser *parser);
/// The choices of the last parse (`choice_count` of them).
const bw_choice *bw_choices(const bw_parser *parser);
/// Turns the fast path on (the default) or off. Off, every line is walked with simdjson On-Demand; the
/// results are the same either way (the fast path hands every line it does not accept to On-Demand).
void bw_parser_set_fast_path(bw_parser *parser, int enabled);
/// How many lines the fast path parsed and how many went through On-Demand, since the parser was made.
void bw_parser_path_counts(const bw_parser *parser, uint64_t *fast, uint64_t *slow);
/// A short English description of a simdjson error code.
const char *bw_simdjson_error_message(int32_t code);
/// The name of the simdjson implementation that the On-Demand walk is compiled for ("haswell" on x86-64).
const char *bw_implementation_name(const bw_parser *parser);
/// The name of the simdjson implementation that runs stage 1 (structural indexing, UTF-8 validation) for
/// both walks: the one libsimdjson picks for the CPU at run time ("icelake", "haswell", "westmere", …).
const char *bw_stage1_implementation_name(const bw_parser *parser);

#ifdef __cplusplus
}
#endif
#endif
