// The fast path of `walker::parse`: the same walk over simdjson's stage-1 structural index directly, for
// lines that are valid and plain. bw_json.cpp includes this file inside `namespace bw_impl`, after
// bw_walker.h. No include guard on purpose.
//
// Why: On-Demand's general iteration (an iterator per object, a depth count, an error check and a
// `skip_child` per value) cost about 5 000 instructions per event line on top of stage 1, more than the rest
// of building the event. Stage 1 has already found every structural character and the first byte of every
// scalar, checked the UTF-8 and that every string is closed without raw control characters; what is left
// is to check the grammar between those positions and to fill the slots, which takes a few instructions per
// token.
//
// simdjson internals: the index is the one On-Demand's `parser::iterate` builds with its stage 1 (the kernel
// libsimdjson picks for the CPU at run time), read through the document's iterator (`root_position`, and the
// protected `end_position`) before On-Demand has moved; so each line runs stage 1 once, whichever walk takes
// it. This is Debian's libsimdjson-dev 3.0.1 (the static_assert in bw_json.cpp pins the version). What this
// relies on, checked on 3.0.1: stage 1 rejects invalid UTF-8, raw control characters in strings and unclosed
// strings, and refuses a line longer than its capacity. Entries at and after `n` are not relied on: every read
// of a token checks `k < n` (past the last token, idx[n] is the line's length, whose byte is the caller's
// padding, and later entries may be left from an earlier, longer line).
//
// The contract: `run` either fills the slots, choices and status exactly as `walker::walk_root` would for the
// same line and returns true, or returns false having decided nothing ("bail"), and the caller walks the same
// indexed line with On-Demand. It bails on everything that is an error there and on everything it does not
// handle itself: escapes in keys or strings, numbers other than plain integers of up to 18 digits (and -0),
// duplicate keys, the limits (depth, string length, choices). So errors, their offsets and messages always
// come from the On-Demand walker, and a line it accepts is one the On-Demand walker accepts identically.

struct fast_walker {
    walker &w;
    const uint8_t *buf = nullptr;
    size_t len = 0;
    const uint32_t *idx = nullptr;
    uint32_t n = 0;
    uint32_t k = 0; // the next token

    static simdjson_inline bool is_ws(uint8_t c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

    // Where the token after token `t` starts (the line's end after the last one).
    simdjson_inline size_t next_start(uint32_t t) const noexcept { return t + 1 < n ? idx[t + 1] : len; }

    // Whether only whitespace lies in [from, to).
    simdjson_inline bool only_ws(size_t from, size_t to) const noexcept {
        if (from > to) return false;
        for (size_t i = from; i < to; i++) if (!is_ws(buf[i])) return false;
        return true;
    }

    // The length of the string whose first content byte is at `p`, or false if a backslash comes before
    // the closing quote. Stage 1 guarantees the quote exists inside the line, and the padding after the
    // line makes every 32-byte block that starts inside it readable.
    static simdjson_inline bool plain_string(const uint8_t *p, size_t &length) noexcept {
        size_t i = 0;
#if defined(__x86_64__)
        const __m256i quote = _mm256_set1_epi8('"'), backslash = _mm256_set1_epi8('\\');
        while (true) {
            __m256i chunk = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p + i));
            uint32_t m = uint32_t(_mm256_movemask_epi8(
                _mm256_or_si256(_mm256_cmpeq_epi8(chunk, quote), _mm256_cmpeq_epi8(chunk, backslash))));
            if (m) {
                i += size_t(__builtin_ctz(m));
                break;
            }
            i += 32;
        }
#else
        while (p[i] != '"' && p[i] != '\\') i++;
#endif
        if (p[i] != '"') return false;
        length = i;
        return true;
    }

    // A string token at token k (its opening quote); on success k is past it.
    simdjson_inline bool string_token(const uint8_t *&start, size_t &length) noexcept {
        size_t open = idx[k];
        if (!plain_string(buf + open + 1, length)) return false;
        if (!only_ws(open + 2 + length, next_start(k))) return false;
        start = buf + open + 1;
        k++;
        return true;
    }

    // A scalar at token k into `s` (strings, plain integers, true, false, null); containers are skipped.
    bool record(bw_slot &s, size_t depth) noexcept {
        if (k >= n) return false; // past the last token: a line that ends inside a container
        size_t at = idx[k];
        uint8_t c = buf[at];
        switch (c) {
        case '"':
            return string_record(s);
        case 't':
            if (std::memcmp(buf + at, "true", 4) != 0 || !only_ws(at + 4, next_start(k))) return false;
            s.type = BW_TRUE;
            k++;
            return true;
        case 'f':
            if (std::memcmp(buf + at, "false", 5) != 0 || !only_ws(at + 5, next_start(k))) return false;
            s.type = BW_FALSE;
            k++;
            return true;
        case 'n':
            if (std::memcmp(buf + at, "null", 4) != 0 || !only_ws(at + 4, next_start(k))) return false;
            s.type = BW_NULL;
            k++;
            return true;
        case '{':
            s.type = BW_OBJECT;
            return skip(depth);
        case '[':
            s.type = BW_ARRAY;
            s.len = 0;
            return skip(depth);
        default: {
            // -?(0|[1-9][0-9]{0,17}), then whitespace up to the next token; anything else is left to On-Demand.
            size_t i = at;
            bool negative = c == '-';
            if (negative) i++;
            uint8_t d = buf[i];
            if (d < '0' || d > '9') return false;
            int64_t v = 0;
            size_t first = i;
            if (d == '0') {
                if (negative) return false;
                i++;
            } else {
                while (buf[i] >= '0' && buf[i] <= '9') {
                    v = v * 10 + (buf[i] - '0');
                    i++;
                    if (i - first > 18) return false;
                }
            }
            if (!only_ws(i, next_start(k))) return false;
            s.type = BW_INT;
            s.i = negative ? -v : v;
            k++;
            return true;
        }
        }
    }

    // A key at token k followed by ':'; on success k is at the value and `known` is the key's index entry in
    // context `ctx` (nullptr for a key Boardwalk does not read).
    simdjson_inline bool key(uint8_t ctx, const bw::key_index::candidate *&known, size_t &length, uint32_t &quote) noexcept {
        if (k >= n) return false;
        quote = idx[k];
        if (buf[quote] != '"') return false;
        if (k + 1 >= n) return false;
        uint32_t colon = idx[k + 1];
        if (buf[colon] != ':') return false;
        const char *name = reinterpret_cast<const char *>(buf + quote + 1);
        // Compact JSON: the byte before the colon is the closing quote (a quote after the closing one would
        // open a string, which stage 1 would have indexed before the colon). A key that matches a known
        // name has no backslash, so it needs no scan.
        known = nullptr;
        if (ctx < bw::CTX_COUNT && buf[colon - 1] == '"' && colon - 1 > quote) {
            length = colon - quote - 2;
            known = bw::lookup_candidate16(ctx, name, length);
            if (known) {
                k += 2;
                return k < n;
            }
        }
        if (!plain_string(buf + quote + 1, length)) return false;
        if (!only_ws(quote + 2 + length, colon)) return false;
        if (ctx < bw::CTX_COUNT) known = bw::lookup_candidate16(ctx, name, length);
        k += 2;
        return k < n;
    }

    // After a value inside an object or array: ',' (then k is at the next key or element) or the closer.
    // Returns 1 for more, 0 for the end, -1 for anything else.
    simdjson_inline int next(uint8_t closer) noexcept {
        if (k >= n) return -1;
        uint8_t c = buf[idx[k]];
        k++;
        if (c == ',') return k < n ? 1 : -1;
        if (c == closer) return 0;
        return -1;
    }

    // Validates a value nobody reads.
    bool skip(size_t depth) noexcept {
        // Every token read is checked against the count: past the last one, idx[n] is the line's length and later
        // entries may be left from an earlier line, so buf there is the caller's padding, or worse.
        if (k >= n) return false;
        uint8_t c = buf[idx[k]];
        if (c == '{') {
            if (depth >= w.max_depth) return false;
            k++;
            if (k < n && buf[idx[k]] == '}') { k++; return true; }
            while (true) {
                const bw::key_index::candidate *known;
                size_t length;
                uint32_t quote;
                // CTX_COUNT: no key is known there, so every key is scanned for escapes.
                if (!key(bw::CTX_COUNT, known, length, quote)) return false;
                if (length > w.max_string) return false;
                if (!skip(depth + 1)) return false;
                int more = next('}');
                if (more < 0) return false;
                if (more == 0) return true;
            }
        }
        if (c == '[') {
            if (depth >= w.max_depth) return false;
            k++;
            if (k < n && buf[idx[k]] == ']') { k++; return true; }
            while (true) {
                if (!skip(depth + 1)) return false;
                int more = next(']');
                if (more < 0) return false;
                if (more == 0) return true;
            }
        }
        bw_slot scratch{};
        return record(scratch, depth);
    }

    // The fields of the object at token k (its '{'), as `walker::walk_fields`.
    bool fields(uint8_t ctx, int level, int slot_base, size_t depth) noexcept {
        bw_slot *lv = w.slots + level * BW_SLOTS_PER_LEVEL;
        uint64_t &present = w.st.present[level];
        k++;
        if (k < n && buf[idx[k]] == '}') { k++; return true; }
        while (true) {
            const bw::key_index::candidate *e;
            size_t length;
            uint32_t quote;
            if (!key(ctx, e, length, quote)) return false;
            if (!e) {
                if (length > w.max_string) return false;
                if (!skip(depth + 1)) return false;
            } else {
                int id = slot_base + e->slot;
                uint64_t bit = uint64_t(1) << id;
                if (present & bit) return false;
                present |= bit;
                bw_slot &s = lv[id];
                s.alias = e->alias;
                s.key_offset = quote;
                s.offset = idx[k];
                if (!field(ctx, level, id, s, depth + 1)) return false;
            }
            int more = next('}');
            if (more < 0) return false;
            if (more == 0) return true;
        }
    }

    // A known object at token k, as `walker::walk_object`.
    bool object(uint8_t ctx, int level, int slot_base, size_t depth) noexcept {
        if (depth >= w.max_depth) return false;
        return fields(ctx, level, slot_base, depth);
    }

    // A string value at token k into `s`.
    simdjson_inline bool string_record(bw_slot &s) noexcept {
        const uint8_t *p;
        size_t length;
        if (!string_token(p, length)) return false;
        if (length > w.max_string) return false;
        s.type = BW_STRING;
        s.s = reinterpret_cast<const char *>(p);
        s.len = uint32_t(length);
        s.i = -1;
        return true;
    }

    // Whether `bw::classify` gives slot `id` codes at all (most slots hold ids, which it leaves at -1).
    static simdjson_inline bool has_codes(int id) noexcept {
        return id <= BW_S_NAME || id == BW_S_ELEMENT_TYPE || id == BW_S_PARAMS_TYPE || id == BW_S_ACTION_ELEMENT_TYPE
            || id == BW_S_VALUE_FIELDS + BW_VF_TYPE || id == BW_S_VALUE_FIELDS + 7 + BW_VF_TYPE
            || id == BW_S_VALUE_FIELDS + 14 + BW_VF_TYPE;
    }

    // Strings, the common case, without a call.
    simdjson_inline bool record_classified(int id, bw_slot &s, size_t depth) noexcept {
        if (buf[idx[k]] == '"') {
            if (!string_record(s)) return false;
            if (has_codes(id)) s.i = bw::classify(id, std::string_view(s.s, s.len));
            return true;
        }
        if (!record(s, depth)) return false;
        if (s.type == BW_STRING) s.i = bw::classify(id, std::string_view(s.s, s.len));
        return true;
    }

    // As `walker::walk_field`.
    simdjson_inline bool field(uint8_t ctx, int level, int id, bw_slot &s, size_t depth) noexcept {
        uint8_t c = buf[idx[k]];
        if (ctx == bw::CTX_MSG) {
            const uint8_t sub = bw::message_child_context(id);
            switch (id) {
            case BW_S_VALUE: return value(level, BW_S_VALUE_FIELDS, s, depth);
            case BW_S_EVENT:
                if (level + 1 < BW_LEVELS && c == '{') {
                    s.type = BW_OBJECT;
                    w.st.present[level + 1] = 0;
                    return object(bw::CTX_MSG, level + 1, 0, depth);
                }
                return record(s, depth);
            default: break;
            }
            if (sub != 255 && c == '{') {
                s.type = BW_OBJECT;
                return object(sub, level, 0, depth);
            }
            return record_classified(id, s, depth);
        }
        if (id == BW_S_PARAMS_VALUE) return value(level, BW_S_VALUE_FIELDS + 7, s, depth);
        if (id == BW_S_ACTION_VALUE) return value(level, BW_S_VALUE_FIELDS + 14, s, depth);
        return record_classified(id, s, depth);
    }

    // As `walker::walk_value`: an object of value fields, or an array of choices.
    bool value(int level, int fields_base, bw_slot &s, size_t depth) noexcept {
        if (k >= n) return false;
        uint8_t c = buf[idx[k]];
        if (c == '{') {
            s.type = BW_OBJECT;
            return object(bw::CTX_VALUE, level, fields_base, depth);
        }
        if (c != '[') return record(s, depth);
        if (depth >= w.max_depth) return false;
        s.type = BW_ARRAY;
        s.i = w.st.choice_count;
        s.len = 0;
        k++;
        if (k < n && buf[idx[k]] == ']') { k++; return true; }
        while (true) {
            if (k >= n) return false;
            if (w.st.choice_count >= w.max_choices) return false;
            bw_choice &ch = w.choices[w.st.choice_count];
            ch.self = bw_slot{};
            ch.id.type = ch.value.type = ch.label.type = BW_ABSENT;
            ch.self.offset = idx[k];
            w.st.choice_count++;
            s.len++;
            if (buf[idx[k]] == '{') {
                ch.self.type = BW_OBJECT;
                if (!choice(ch, depth + 1)) return false;
            } else if (!record(ch.self, depth + 1)) {
                return false;
            }
            int more = next(']');
            if (more < 0) return false;
            if (more == 0) return true;
        }
    }

    // As `walker::walk_choice`.
    bool choice(bw_choice &ch, size_t depth) noexcept {
        if (depth >= w.max_depth) return false;
        k++;
        if (k < n && buf[idx[k]] == '}') { k++; return true; }
        while (true) {
            const bw::key_index::candidate *e;
            size_t length;
            uint32_t quote;
            if (!key(bw::CTX_CHOICE, e, length, quote)) return false;
            if (!e) {
                if (length > w.max_string) return false;
                if (!skip(depth + 1)) return false;
            } else {
                bw_slot &s = e->slot == 0 ? ch.id : e->slot == 1 ? ch.value : ch.label;
                if (s.type != BW_ABSENT) return false;
                s.alias = 0;
                s.key_offset = quote;
                s.offset = idx[k];
                if (!record(s, depth + 1)) return false;
            }
            int more = next('}');
            if (more < 0) return false;
            if (more == 0) return true;
        }
    }

    // The whole line: a root object and nothing after it.
    bool run(const uint8_t *line, size_t length, const uint32_t *indexes, uint32_t count) noexcept {
        buf = line;
        len = length;
        idx = indexes;
        n = count;
        k = 0;
        if (n == 0 || buf[idx[0]] != '{') return false;
        if (!fields(bw::CTX_MSG, 0, 0, 0)) return false;
        return k == n;
    }
};
