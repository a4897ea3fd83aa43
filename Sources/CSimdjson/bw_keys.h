// Key spellings Boardwalk recognises, per object context. Shared by every simdjson implementation.
#ifndef BW_KEYS_H
#define BW_KEYS_H
#include <cstdint>
#include <cstring>
#include <string_view>
#include "bw_json.h"

namespace bw {

enum context : uint8_t { CTX_MSG, CTX_META, CTX_PARAMS, CTX_ACTION, CTX_VIEW, CTX_ERROR, CTX_VALUE, CTX_CHOICE, CTX_COUNT };

struct key_entry {
    const char *name;
    uint8_t ctx;
    int8_t slot;   // slot id (for CTX_VALUE / CTX_CHOICE: field offset)
    uint8_t alias; // 0 = the canonical spelling
};

// The first spelling of each slot is its canonical one (used in error paths and by the writer).
inline constexpr key_entry key_table[] = {
    {"type", CTX_MSG, BW_S_TYPE, 0},
    {"kind", CTX_MSG, BW_S_KIND, 0},
    {"id", CTX_MSG, BW_S_ID, 0},
    {"name", CTX_MSG, BW_S_NAME, 0},
    {"action_id", CTX_MSG, BW_S_ACTION_ID, 0}, {"actionId", CTX_MSG, BW_S_ACTION_ID, 1},
    {"element_id", CTX_MSG, BW_S_ELEMENT_ID, 0}, {"elementId", CTX_MSG, BW_S_ELEMENT_ID, 1},
    {"element_type", CTX_MSG, BW_S_ELEMENT_TYPE, 0}, {"elementType", CTX_MSG, BW_S_ELEMENT_TYPE, 1},
    {"value", CTX_MSG, BW_S_VALUE, 0},
    {"reply", CTX_MSG, BW_S_REPLY, 0},
    {"timestamp", CTX_MSG, BW_S_TIMESTAMP, 0}, {"ts", CTX_MSG, BW_S_TIMESTAMP, 1},
    {"created_at", CTX_MSG, BW_S_TIMESTAMP, 2}, {"received_at", CTX_MSG, BW_S_TIMESTAMP, 3},
    {"createdAt", CTX_MSG, BW_S_TIMESTAMP, 4}, {"receivedAt", CTX_MSG, BW_S_TIMESTAMP, 5},
    {"session_id", CTX_MSG, BW_S_SESSION_ID, 0}, {"sessionId", CTX_MSG, BW_S_SESSION_ID, 1},
    {"profile_id", CTX_MSG, BW_S_PROFILE_ID, 0}, {"profileId", CTX_MSG, BW_S_PROFILE_ID, 1},
    {"event_id", CTX_MSG, BW_S_EVENT_ID, 0}, {"eventId", CTX_MSG, BW_S_EVENT_ID, 1},
    {"placement_id", CTX_MSG, BW_S_PLACEMENT_ID, 0}, {"placementId", CTX_MSG, BW_S_PLACEMENT_ID, 1},
    {"variation_id", CTX_MSG, BW_S_VARIATION_ID, 0}, {"variationId", CTX_MSG, BW_S_VARIATION_ID, 1},
    {"meta", CTX_MSG, BW_S_META, 0},
    {"params", CTX_MSG, BW_S_PARAMS, 0},
    {"action", CTX_MSG, BW_S_ACTION, 0},
    {"view", CTX_MSG, BW_S_VIEW, 0},
    {"error", CTX_MSG, BW_S_ERROR, 0},
    {"event", CTX_MSG, BW_S_EVENT, 0},

    {"onboarding_id", CTX_META, BW_S_META_ONBOARDING_ID, 0}, {"onboardingId", CTX_META, BW_S_META_ONBOARDING_ID, 1},
    {"screen_cid", CTX_META, BW_S_META_SCREEN_CID, 0}, {"screenClientId", CTX_META, BW_S_META_SCREEN_CID, 1},
    {"screen_index", CTX_META, BW_S_META_SCREEN_INDEX, 0}, {"screenIndex", CTX_META, BW_S_META_SCREEN_INDEX, 1},
    {"total_screens", CTX_META, BW_S_META_TOTAL_SCREENS, 0}, {"screensTotal", CTX_META, BW_S_META_TOTAL_SCREENS, 1},
    {"totalScreens", CTX_META, BW_S_META_TOTAL_SCREENS, 2},

    {"type", CTX_PARAMS, BW_S_PARAMS_TYPE, 0},
    {"value", CTX_PARAMS, BW_S_PARAMS_VALUE, 0},
    {"element_id", CTX_PARAMS, BW_S_PARAMS_ELEMENT_ID, 0}, {"elementId", CTX_PARAMS, BW_S_PARAMS_ELEMENT_ID, 1},
    {"reply", CTX_PARAMS, BW_S_PARAMS_REPLY, 0},

    {"element_id", CTX_ACTION, BW_S_ACTION_ELEMENT_ID, 0}, {"elementId", CTX_ACTION, BW_S_ACTION_ELEMENT_ID, 1},
    {"element_type", CTX_ACTION, BW_S_ACTION_ELEMENT_TYPE, 0}, {"elementType", CTX_ACTION, BW_S_ACTION_ELEMENT_TYPE, 1},
    {"value", CTX_ACTION, BW_S_ACTION_VALUE, 0},
    {"action_id", CTX_ACTION, BW_S_ACTION_ACTION_ID, 0}, {"actionId", CTX_ACTION, BW_S_ACTION_ACTION_ID, 1},

    {"id", CTX_VIEW, BW_S_VIEW_ID, 0},
    {"placement_id", CTX_VIEW, BW_S_VIEW_PLACEMENT_ID, 0}, {"placementId", CTX_VIEW, BW_S_VIEW_PLACEMENT_ID, 1},
    {"variation_id", CTX_VIEW, BW_S_VIEW_VARIATION_ID, 0}, {"variationId", CTX_VIEW, BW_S_VIEW_VARIATION_ID, 1},

    {"domain", CTX_ERROR, BW_S_ERROR_DOMAIN, 0},
    {"code", CTX_ERROR, BW_S_ERROR_CODE, 0}, {"adapty_code", CTX_ERROR, BW_S_ERROR_CODE, 1},
    {"message", CTX_ERROR, BW_S_ERROR_MESSAGE, 0},
    {"detail", CTX_ERROR, BW_S_ERROR_DETAIL, 0},

    {"id", CTX_VALUE, BW_VF_ID, 0},
    {"value", CTX_VALUE, BW_VF_VALUE, 0},
    {"label", CTX_VALUE, BW_VF_LABEL, 0},
    {"type", CTX_VALUE, BW_VF_TYPE, 0},
    {"day", CTX_VALUE, BW_VF_DAY, 0},
    {"month", CTX_VALUE, BW_VF_MONTH, 0},
    {"year", CTX_VALUE, BW_VF_YEAR, 0},

    {"id", CTX_CHOICE, 0, 0},
    {"value", CTX_CHOICE, 1, 0},
    {"label", CTX_CHOICE, 2, 0},
};

inline constexpr size_t key_count = sizeof(key_table) / sizeof(key_table[0]);
inline constexpr size_t max_key_len = 16;

// Buckets by (context, length): at most a handful of candidates per bucket.
struct key_index {
    uint8_t start[CTX_COUNT][max_key_len + 1];
    uint8_t count[CTX_COUNT][max_key_len + 1];
    uint8_t order[key_count];
    key_index() {
        size_t n = 0;
        for (int c = 0; c < CTX_COUNT; c++) {
            for (size_t len = 0; len <= max_key_len; len++) {
                start[c][len] = uint8_t(n);
                uint8_t k = 0;
                for (size_t i = 0; i < key_count; i++) {
                    if (key_table[i].ctx == c && std::strlen(key_table[i].name) == len) { order[n++] = uint8_t(i); k++; }
                }
                count[c][len] = k;
            }
        }
    }
};

extern const key_index the_key_index;

/// The key entry for `key` in context `ctx`, or nullptr.
inline const key_entry *lookup_key(uint8_t ctx, std::string_view key) noexcept {
    size_t len = key.size();
    if (len > max_key_len) return nullptr;
    const key_index &ix = the_key_index;
    const uint8_t *o = ix.order + ix.start[ctx][len];
    for (uint8_t k = 0, n = ix.count[ctx][len]; k < n; k++) {
        const key_entry &e = key_table[o[k]];
        if (std::memcmp(e.name, key.data(), len) == 0) return &e;
    }
    return nullptr;
}

} // namespace bw
#endif
