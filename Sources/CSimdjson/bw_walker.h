// The object walker, compiled once per simdjson implementation: bw_json.cpp includes this file inside
// `namespace bw_<impl>` with `sj` naming simdjson's implementation namespace. No include guard on purpose.

using simdjson::error_code;
using sj_value = sj::ondemand::value;
using sj_object = sj::ondemand::object;
using sj_array = sj::ondemand::array;
using sj_json_type = sj::ondemand::json_type;

struct walker {
    sj::ondemand::parser parser;
    bw_slot slots[BW_LEVELS * BW_SLOTS_PER_LEVEL];
    bw_choice *choices = nullptr;
    size_t max_choices = 0;
    size_t max_string = 0;
    size_t max_depth = 0;
    const char *base = nullptr;
    size_t line_len = 0;
    bw_status st{};
    /// Whether the fast path (bw_fast.h) is tried before the On-Demand walk.
    bool fast_enabled = true;
    uint64_t fast_lines = 0, slow_lines = 0;

    explicit walker(size_t max_line) : parser(max_line) {}

    bw_status parse(const uint8_t *line, size_t len, size_t capacity) noexcept;

    int64_t offset_of(const char *p) const noexcept { return p ? int64_t(p - base) : -1; }

    bool fail(int32_t err, int64_t offset) noexcept {
        st.error = err;
        st.error_offset = offset;
        return false;
    }
    bool fail_sj(error_code e, int64_t offset) noexcept {
        st.simdjson_error = int32_t(e);
        return fail(BW_E_SIMDJSON, offset);
    }

    // The offset of a value's first byte, or -1.
    int64_t start_of(sj_value &v) noexcept {
        return offset_of(v.raw_json_token().data());
    }

    // simdjson 3.0.1 turns a lone `\uD800`-style escape into the bytes of a surrogate; reject it.
    bool check_escapes(sj_value &v, std::string_view out, int64_t at) noexcept {
        std::string_view tok = v.raw_json_token();
        // The token runs from the opening quote to the next structural character: exactly the quotes and
        // the output means there was no escape (compact JSON, the common case), with no scan.
        if (tok.size() == out.size() + 2) return true;
        if (std::memchr(tok.data(), '\\', tok.size()) == nullptr) return true;
        if (!simdjson::validate_utf8(out.data(), out.size())) return fail(BW_E_BAD_ESCAPE, at);
        return true;
    }

    // Whether `n` bytes at `p` hold a backslash. The bytes lie inside the line, whose padding makes the
    // whole last 32-byte block readable; a call to memchr costs more than the scan for id-sized strings.
    static simdjson_inline bool has_backslash(const char *p, size_t n) noexcept {
#if defined(__x86_64__)
        for (size_t i = 0; i < n; i += 32) {
            __m256i chunk = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p + i));
            uint64_t m = uint32_t(_mm256_movemask_epi8(_mm256_cmpeq_epi8(chunk, _mm256_set1_epi8('\\'))));
            if (n - i < 32) m &= (uint64_t(1) << (n - i)) - 1;
            if (m) return true;
        }
        return false;
#else
        return std::memchr(p, '\\', n) != nullptr;
#endif
    }

    bool string_value(sj_value &v, bw_slot &s) noexcept {
        // The common case, a string without escapes, is read in place: the token runs from the opening
        // quote to the next structural character, so after trailing whitespace it ends with the closing
        // quote, and its bytes are the value. Stage 1 already checked the whole line's UTF-8 and rejected
        // unescaped control characters, so this skips only simdjson's copy into its string buffer. The
        // value is left unconsumed; the enclosing object or array skips the one token.
        std::string_view tok = v.raw_json_token();
        size_t n = tok.size();
        while (n > 2 && (tok[n - 1] == ' ' || tok[n - 1] == '\t' || tok[n - 1] == '\n' || tok[n - 1] == '\r')) n--;
        if (n >= 2 && tok[0] == '"' && tok[n - 1] == '"' && !has_backslash(tok.data() + 1, n - 2)) {
            if (n - 2 > max_string) return fail(BW_E_STRING_TOO_LONG, s.offset);
            s.type = BW_STRING;
            s.s = tok.data() + 1;
            s.len = uint32_t(n - 2);
            s.i = -1;
            return true;
        }
        std::string_view sv;
        if (auto e = v.get_string().get(sv)) return fail_sj(e, s.offset);
        if (sv.size() > max_string) return fail(BW_E_STRING_TOO_LONG, s.offset);
        if (!check_escapes(v, sv, s.offset)) return false;
        s.type = BW_STRING;
        s.s = sv.data();
        s.len = uint32_t(sv.size());
        s.i = -1;
        return true;
    }

    // Records a scalar, or skips (validating) an object or array whose fields are not needed.
    bool record(sj_value &v, bw_slot &s, size_t depth) noexcept {
        sj_json_type t;
        if (auto e = v.type().get(t)) return fail_sj(e, s.offset);
        switch (t) {
        case sj_json_type::string:
            return string_value(v, s);
        case sj_json_type::number: {
            sj::ondemand::number n;
            if (auto e = v.get_number().get(n)) return fail_sj(e, s.offset);
            switch (n.get_number_type()) {
            case sj::ondemand::number_type::signed_integer: s.type = BW_INT; s.i = n.get_int64(); break;
            case sj::ondemand::number_type::unsigned_integer: s.type = BW_UINT; s.i = int64_t(n.get_uint64()); break;
            default: s.type = BW_DOUBLE; s.d = n.get_double(); break;
            }
            return true;
        }
        case sj_json_type::boolean: {
            bool b;
            if (auto e = v.get_bool().get(b)) return fail_sj(e, s.offset);
            s.type = b ? BW_TRUE : BW_FALSE;
            return true;
        }
        case sj_json_type::null: {
            bool is_null;
            if (auto e = v.is_null().get(is_null)) return fail_sj(e, s.offset);
            if (!is_null) return fail_sj(simdjson::N_ATOM_ERROR, s.offset);
            s.type = BW_NULL;
            return true;
        }
        case sj_json_type::object:
            s.type = BW_OBJECT;
            return skip(v, depth);
        case sj_json_type::array:
            s.type = BW_ARRAY;
            s.len = 0;
            return skip(v, depth);
        }
        return fail_sj(simdjson::TAPE_ERROR, s.offset);
    }

    // Records a value and, for the slots holding one of a closed set of names, its code in `i`.
    bool record_classified(sj_value &v, int id, bw_slot &s, size_t depth) noexcept {
        if (!record(v, s, depth)) return false;
        if (s.type == BW_STRING) s.i = bw::classify(id, std::string_view(s.s, s.len));
        return true;
    }

    // Walks a value that Boardwalk does not read, so that whatever is accepted is valid JSON
    // (On-Demand would otherwise skip it unchecked).
    bool skip(sj_value &v, size_t depth) noexcept {
        int64_t at = start_of(v);
        sj_json_type t;
        if (auto e = v.type().get(t)) return fail_sj(e, at);
        // `depth` counts the containers around this value (the top-level object is 1).
        if ((t == sj_json_type::object || t == sj_json_type::array) && depth >= max_depth)
            return fail_sj(simdjson::DEPTH_ERROR, at);
        switch (t) {
        case sj_json_type::object: {
            sj_object obj;
            if (auto e = v.get_object().get(obj)) return fail_sj(e, at);
            for (auto field : obj) {
                if (auto e = field.error()) return fail_sj(e, current());
                const char *key_quote;
                std::string_view key;
                if (!key_of(field, key_quote, key)) return false;
                if (key.size() > max_string) return fail(BW_E_STRING_TOO_LONG, offset_of(key_quote));
                sj_value fv = field.value();
                if (!skip(fv, depth + 1)) return false;
            }
            return true;
        }
        case sj_json_type::array: {
            sj_array arr;
            if (auto e = v.get_array().get(arr)) return fail_sj(e, at);
            for (auto elem : arr) {
                sj_value ev;
                if (auto e = elem.get(ev)) return fail_sj(e, current());
                if (!skip(ev, depth + 1)) return false;
            }
            return true;
        }
        default: {
            bw_slot scratch{};
            scratch.offset = uint32_t(at < 0 ? 0 : at);
            return record(v, scratch, depth);
        }
        }
    }

    sj::ondemand::document *doc = nullptr;
    int64_t current() noexcept {
        const char *loc;
        if (doc && !doc->current_location().get(loc)) return offset_of(loc);
        return -1;
    }

    // Walks the fields of an object in context `ctx`, storing known ones at `slot_base` (+ the entry's slot).
    // For CTX_MSG, `level` says which level; nested known objects recurse.
    bool walk_object(sj_value &v, uint8_t ctx, int level, int slot_base, size_t depth) noexcept {
        if (depth >= max_depth) return fail_sj(simdjson::DEPTH_ERROR, start_of(v));
        sj_object obj;
        if (auto e = v.get_object().get(obj)) return fail_sj(e, start_of(v));
        return walk_fields(obj, ctx, level, slot_base, depth);
    }

    // The fields of an object (the line's root, or a nested known object) at `depth`.
    bool walk_fields(sj_object &obj, uint8_t ctx, int level, int slot_base, size_t depth) noexcept {
        bw_slot *lv = slots + level * BW_SLOTS_PER_LEVEL;
        uint64_t &present = st.present[level];
        for (auto field : obj) {
            if (auto e = field.error()) return fail_sj(e, current());
            const char *key_quote;
            std::string_view key;
            if (!key_of(field, key_quote, key)) return false;
            sj_value fv = field.value();
            const bw::key_entry *k = lookup(ctx, key);
            if (!k) {
                if (key.size() > max_string) return fail(BW_E_STRING_TOO_LONG, offset_of(key_quote));
                if (!skip(fv, depth + 1)) return false;
                continue;
            }
            int id = slot_base + k->slot;
            uint64_t bit = uint64_t(1) << id;
            if (present & bit) {
                st.error_slot = level * BW_SLOTS_PER_LEVEL + id;
                st.error_alias = k->alias;
                return fail(BW_E_DUPLICATE, offset_of(key_quote));
            }
            present |= bit;
            bw_slot &s = lv[id];
            s.alias = k->alias;
            s.key_offset = uint32_t(offset_of(key_quote));
            int64_t at = start_of(fv);
            s.offset = uint32_t(at < 0 ? 0 : at);
            if (!walk_field(fv, ctx, level, id, s, depth + 1)) return false;
        }
        return true;
    }

    // A field's key without copying: the raw bytes when they hold no escape, else the unescaped copy.
    // Returns false (with the error set) on a bad key.
    template <class Field>
    simdjson_inline bool key_of(Field &field, const char *&quote, std::string_view &key) noexcept {
        const char *p = field.key().raw();
        quote = p - 1;
        size_t n = 0;
        // Keys end inside the line (stage 1 checked every string is closed), so this stops in bounds; the
        // first 16 bytes are read at once (the line's padding makes them readable).
#if defined(__x86_64__)
        __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p));
        unsigned m = unsigned(_mm_movemask_epi8(_mm_or_si128(
            _mm_cmpeq_epi8(chunk, _mm_set1_epi8('"')), _mm_cmpeq_epi8(chunk, _mm_set1_epi8('\\')))));
        if (m) n = size_t(__builtin_ctz(m));
        else { n = 16; while (p[n] != '"' && p[n] != '\\') n++; }
#else
        while (p[n] != '"' && p[n] != '\\') n++;
#endif
        if (p[n] == '"') {
            key = std::string_view(p, n);
            return true;
        }
        if (auto e = field.unescaped_key().get(key)) return fail_sj(e, offset_of(quote));
        if (!simdjson::validate_utf8(key.data(), key.size())) return fail(BW_E_BAD_ESCAPE, offset_of(quote));
        return true;
    }

    // Raw keys point into the padded line (16 readable bytes guaranteed); unescaped ones do not.
    simdjson_inline const bw::key_entry *lookup(uint8_t ctx, std::string_view key) noexcept {
        if (key.data() >= base && key.data() < base + line_len) return bw::lookup_key16(ctx, key.data(), key.size());
        return bw::lookup_key(ctx, key);
    }

    bool is_object(sj_value &v, bw_slot &s) noexcept {
        sj_json_type t;
        if (auto e = v.type().get(t)) return fail_sj(e, s.offset);
        return t == sj_json_type::object;
    }

    bool walk_field(sj_value &v, uint8_t ctx, int level, int id, bw_slot &s, size_t depth) noexcept {
        if (ctx == bw::CTX_MSG) {
            const uint8_t sub = bw::message_child_context(id);
            switch (id) {
            case BW_S_VALUE: return walk_value(v, level, BW_S_VALUE_FIELDS, s, depth);
            case BW_S_EVENT:
                if (level + 1 < BW_LEVELS) {
                    bool obj = false;
                    sj_json_type t;
                    if (auto e = v.type().get(t)) return fail_sj(e, s.offset);
                    obj = t == sj_json_type::object;
                    if (obj) {
                        s.type = BW_OBJECT;
                        st.present[level + 1] = 0;
                        return walk_object(v, bw::CTX_MSG, level + 1, 0, depth);
                    }
                }
                return record(v, s, depth);
            default: break;
            }
            if (sub != 255) {
                sj_json_type t;
                if (auto e = v.type().get(t)) return fail_sj(e, s.offset);
                if (t == sj_json_type::object) {
                    s.type = BW_OBJECT;
                    return walk_object(v, sub, level, 0, depth);
                }
            }
            return record_classified(v, id, s, depth);
        }
        if (id == BW_S_PARAMS_VALUE) return walk_value(v, level, BW_S_VALUE_FIELDS + 7, s, depth);
        if (id == BW_S_ACTION_VALUE) return walk_value(v, level, BW_S_VALUE_FIELDS + 14, s, depth);
        return record_classified(v, id, s, depth);
    }

    // A state value: an object (select, input, date picker) or an array of choices (multi-select).
    bool walk_value(sj_value &v, int level, int fields, bw_slot &s, size_t depth) noexcept {
        sj_json_type t;
        if (auto e = v.type().get(t)) return fail_sj(e, s.offset);
        if (t == sj_json_type::object) {
            s.type = BW_OBJECT;
            return walk_object(v, bw::CTX_VALUE, level, fields, depth);
        }
        if (t != sj_json_type::array) return record(v, s, depth);
        if (depth >= max_depth) return fail_sj(simdjson::DEPTH_ERROR, s.offset);
        s.type = BW_ARRAY;
        s.i = st.choice_count;
        s.len = 0;
        sj_array arr;
        if (auto e = v.get_array().get(arr)) return fail_sj(e, s.offset);
        for (auto elem : arr) {
            sj_value ev;
            if (auto e = elem.get(ev)) return fail_sj(e, current());
            if (st.choice_count >= max_choices) return fail(BW_E_TOO_MANY_CHOICES, start_of(ev));
            bw_choice &c = choices[st.choice_count];
            c.self = bw_slot{};
            c.id.type = c.value.type = c.label.type = BW_ABSENT;
            int64_t at = start_of(ev);
            c.self.offset = uint32_t(at < 0 ? 0 : at);
            st.choice_count++;
            s.len++;
            if (!is_object(ev, c.self)) {
                if (st.error) return false;
                if (!record(ev, c.self, depth + 1)) return false;
                continue;
            }
            if (st.error) return false;
            c.self.type = BW_OBJECT;
            if (!walk_choice(ev, c, depth + 1)) return false;
        }
        return true;
    }

    bool walk_choice(sj_value &v, bw_choice &c, size_t depth) noexcept {
        if (depth >= max_depth) return fail_sj(simdjson::DEPTH_ERROR, c.self.offset);
        sj_object obj;
        if (auto e = v.get_object().get(obj)) return fail_sj(e, c.self.offset);
        for (auto field : obj) {
            if (auto e = field.error()) return fail_sj(e, current());
            const char *key_quote;
            std::string_view key;
            if (!key_of(field, key_quote, key)) return false;
            sj_value fv = field.value();
            const bw::key_entry *k = lookup(bw::CTX_CHOICE, key);
            if (!k) {
                if (key.size() > max_string) return fail(BW_E_STRING_TOO_LONG, offset_of(key_quote));
                if (!skip(fv, depth + 1)) return false;
                continue;
            }
            bw_slot &s = k->slot == 0 ? c.id : k->slot == 1 ? c.value : c.label;
            if (s.type != BW_ABSENT) {
                st.error_slot = int32_t(&c - choices);
                st.error_alias = k->slot;
                return fail(BW_E_CHOICE_DUPLICATE, offset_of(key_quote));
            }
            s.alias = 0;
            s.key_offset = uint32_t(offset_of(key_quote));
            int64_t at = start_of(fv);
            s.offset = uint32_t(at < 0 ? 0 : at);
            if (!record(fv, s, depth + 1)) return false;
            if (s.type == BW_ABSENT) s.type = BW_NULL; // never: record always sets a type
        }
        return true;
    }

    // Starts a line: clears the status and remembers the line for offsets.
    void begin(const uint8_t *line, size_t len) noexcept {
        st = bw_status{};
        st.error_offset = -1;
        st.error_slot = -1;
        base = reinterpret_cast<const char *>(line);
        line_len = len;
        doc = nullptr;
    }

    // The On-Demand walk of a document that stage 1 has indexed and nothing has iterated yet: every line the
    // fast path leaves, and every error. `begin` was called for the line.
    bw_status walk_document(sj::ondemand::document &d) noexcept {
        slow_lines++;
        doc = &d;
        sj_json_type t;
        if (auto e = d.type().get(t)) { fail_sj(e, current()); return st; }
        if (t != sj_json_type::object) {
            st.root_type = t == sj_json_type::array ? BW_ARRAY : t == sj_json_type::string ? BW_STRING
                : t == sj_json_type::number ? BW_INT : t == sj_json_type::boolean ? BW_TRUE : BW_NULL;
            fail(BW_E_NOT_OBJECT, current());
            return st;
        }
        st.root_type = BW_OBJECT;
        // A document is not a value; read the root object through its fields directly.
        sj_object obj;
        if (auto e = d.get_object().get(obj)) { fail_sj(e, current()); return st; }
        if (!walk_root(obj)) return st;
        // simdjson 3.0.1 has no document::at_end(); a location after the object means more tokens follow.
        const char *rest;
        if (!d.current_location().get(rest)) fail(BW_E_TRAILING, offset_of(rest));
        return st;
    }

    bool walk_root(sj_object &obj) noexcept { return walk_fields(obj, bw::CTX_MSG, 0, 0, 0); }
};
