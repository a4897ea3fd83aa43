// Key spellings Boardwalk recognises, per object context. Shared by every simdjson implementation.
#ifndef BW_KEYS_H
#define BW_KEYS_H
#include <cstdint>
#include <cstring>
#include <string_view>
#include "bw_json.h"

namespace bw {

enum context : uint8_t { CTX_MSG, CTX_META, CTX_PARAMS, CTX_ACTION, CTX_VIEW, CTX_ERROR, CTX_VALUE, CTX_CHOICE, CTX_COUNT };

// The context of a message field whose value, when an object, is walked as one (`meta`, `params`, `action`,
// `view`, `error`); 255 for any other field. Both walkers (On-Demand's and the fast path's) ask it.
inline constexpr uint8_t message_child_context(int slot) noexcept {
    switch (slot) {
    case BW_S_META: return CTX_META;
    case BW_S_PARAMS: return CTX_PARAMS;
    case BW_S_ACTION: return CTX_ACTION;
    case BW_S_VIEW: return CTX_VIEW;
    case BW_S_ERROR: return CTX_ERROR;
    default: return 255;
    }
}

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

inline uint64_t load64(const char *p) noexcept {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
}

// Buckets by (context, length), each entry's name as two little-endian words: matching a key is two
// masked 8-byte compares per candidate, with no call and no copy.
struct key_index {
    // The entry's slot and alias are copied in, so that the fast path reads them without following `entry`.
    struct candidate { uint64_t lo, hi; const key_entry *entry; int8_t slot; uint8_t alias; };
    uint8_t start[CTX_COUNT][max_key_len + 1];
    uint8_t count[CTX_COUNT][max_key_len + 1];
    candidate order[key_count];
    key_index() {
        size_t n = 0;
        for (int c = 0; c < CTX_COUNT; c++) {
            for (size_t len = 0; len <= max_key_len; len++) {
                start[c][len] = uint8_t(n);
                uint8_t k = 0;
                for (size_t i = 0; i < key_count; i++) {
                    if (key_table[i].ctx == c && std::strlen(key_table[i].name) == len) {
                        char padded[16] = {};
                        std::memcpy(padded, key_table[i].name, len);
                        order[n++] = candidate{load64(padded), load64(padded + 8), &key_table[i], key_table[i].slot,
                                               key_table[i].alias};
                        k++;
                    }
                }
                count[c][len] = k;
            }
        }
    }
};

extern const key_index the_key_index;

inline uint64_t low_mask(size_t bytes) noexcept { return bytes >= 8 ? ~uint64_t(0) : (uint64_t(1) << (8 * bytes)) - 1; }

/// The index candidate for the `len` bytes at `p` in context `ctx`, or nullptr. At least 16 bytes from `p`
/// must be readable (the line's padding guarantees it for keys inside the line).
inline const key_index::candidate *lookup_candidate16(uint8_t ctx, const char *p, size_t len) noexcept {
    if (len > max_key_len) return nullptr;
    const key_index &ix = the_key_index;
    uint8_t n = ix.count[ctx][len];
    if (n == 0) return nullptr;
    uint64_t lo = load64(p) & low_mask(len);
    uint64_t hi = len > 8 ? load64(p + 8) & low_mask(len - 8) : 0;
    const key_index::candidate *o = ix.order + ix.start[ctx][len];
    for (uint8_t k = 0; k < n; k++) {
        if (o[k].lo == lo && o[k].hi == hi) return o + k;
    }
    return nullptr;
}

/// The key entry for the `len` bytes at `p` in context `ctx`, or nullptr (see `lookup_candidate16`).
inline const key_entry *lookup_key16(uint8_t ctx, const char *p, size_t len) noexcept {
    const key_index::candidate *c = lookup_candidate16(ctx, p, len);
    return c ? c->entry : nullptr;
}

/// The key entry for an unescaped key (any storage), or nullptr.
inline const key_entry *lookup_key(uint8_t ctx, std::string_view key) noexcept {
    if (key.size() > max_key_len) return nullptr;
    char padded[16] = {};
    std::memcpy(padded, key.data(), key.size());
    return lookup_key16(ctx, padded, key.size());
}

// Codes for the closed sets of strings Boardwalk matches (stored in a string slot's `i`; -1 = none).
// The orders match the Swift enums' `allCases`.
inline constexpr std::string_view kind_names[] = {
    "analytics", "state_updated", "open_paywall", "custom", "close", "onboarding_loaded", "error"};
inline constexpr std::string_view bridge_ids[] = {
    "onboarding_on_analytics_action", "onboarding_on_state_updated_action", "onboarding_on_paywall_action",
    "onboarding_on_custom_action", "onboarding_on_close_action", "onboarding_did_finish_loading",
    "onboarding_did_fail_with_error"};  // in kind order
inline constexpr std::string_view analytics_names[] = {
    "onboarding_started", "screen_presented", "screen_completed", "second_screen_presented",
    "registration_screen_presented", "products_screen_presented", "user_email_collected", "onboarding_completed"};
inline constexpr std::string_view element_types[] = {
    "select", "multi_select", "input", "date_picker", "multiSelect", "datePicker"};  // codes 4, 5 fold to 1, 3
inline constexpr std::string_view input_types[] = {"text", "email", "number"};

template <size_t N>
inline int64_t code_in(const std::string_view (&names)[N], std::string_view s) noexcept {
    for (size_t i = 0; i < N; i++) if (names[i] == s) return int64_t(i);
    return -1;
}

/// The code of a string in slot `id` (a level slot id), or -1.
inline int64_t classify(int id, std::string_view s) noexcept {
    switch (id) {
    case BW_S_TYPE: case BW_S_KIND: return code_in(kind_names, s);
    case BW_S_ID: return code_in(bridge_ids, s);
    case BW_S_NAME: return code_in(analytics_names, s);
    case BW_S_ELEMENT_TYPE: case BW_S_PARAMS_TYPE: case BW_S_ACTION_ELEMENT_TYPE: {
        int64_t c = code_in(element_types, s);
        return c == 4 ? 1 : c == 5 ? 3 : c;
    }
    case BW_S_VALUE_FIELDS + BW_VF_TYPE: case BW_S_VALUE_FIELDS + 7 + BW_VF_TYPE: case BW_S_VALUE_FIELDS + 14 + BW_VF_TYPE:
        return code_in(input_types, s);
    default: return -1;
    }
}

} // namespace bw
#endif
