// The C API of bw_json.h over simdjson On-Demand.
//
// Debian's libsimdjson picks its fastest kernel at run time for the DOM API, but On-Demand is compiled
// into the caller ("ondemand is only compiled as part of the builtin implementation", simdjson.h), and
// without -march flags the builtin implementation is the scalar fallback. So on x86-64 this file compiles
// simdjson's haswell (AVX2) implementation as the builtin one, with every function of this file in an
// AVX2 target region, and bw_parser_create refuses to make a parser on a CPU without AVX2 (bw_cpu.c,
// compiled for the baseline CPU, checks).
#if defined(__x86_64__)
// Before every include: template code instantiated with simdjson's types (std::pair for fields) must be
// compiled for AVX2 too, or clang refuses to inline simdjson's always-inline functions into it.
#pragma clang attribute push(__attribute__((target("avx2,bmi,pclmul,lzcnt"))), apply_to = function)
#define SIMDJSON_BUILTIN_IMPLEMENTATION haswell
#define BW_X86 1
#endif
#include "bw_json.h"
#include "bw_keys.h"
#include <new>
#include <simdjson.h>

// bw_fast.h reads the structural index that On-Demand's stage 1 leaves, through protected members of simdjson's
// document and iterator (below): checked against this version only.
static_assert(simdjson::SIMDJSON_VERSION_MAJOR == 3 && simdjson::SIMDJSON_VERSION_MINOR == 0,
              "bw_fast.h reads simdjson 3.0's structural index; check it against this version before building");

namespace bw {
const key_index the_key_index;
}

namespace bw_impl {
namespace sj = simdjson::SIMDJSON_BUILTIN_IMPLEMENTATION;
#include "bw_walker.h"
#include "bw_fast.h"

// simdjson keeps a document's iterator, and where its structural index ends, protected. A pointer to a protected
// member formed through a derived class is the language's way to read them (no cast, no copy of simdjson's code).
struct document_access : sj::ondemand::document {
    static const sj::ondemand::json_iterator &iterator(const sj::ondemand::document &d) noexcept {
        return d.*(&document_access::iter);
    }
};
struct iterator_access : sj::ondemand::json_iterator {
    static const uint32_t *end(const sj::ondemand::json_iterator &it) noexcept {
        return (it.*(&iterator_access::end_position))();
    }
};

bw_status walker::parse(const uint8_t *line, size_t len, size_t capacity) noexcept {
    begin(line, len);
    // One stage 1 per line, On-Demand's own: the fast path walks the structural index it leaves, and when the
    // fast path gives up, On-Demand iterates the same, still untouched, document.
    sj::ondemand::document d;
    if (auto e = parser.iterate(line, len, capacity).get(d)) {
        slow_lines++;
        fail_sj(e, -1);
        return st;
    }
    if (fast_enabled) {
        const sj::ondemand::json_iterator &it = document_access::iterator(d);
        const uint32_t *first = it.root_position();
        st.root_type = BW_OBJECT;
        fast_walker f{*this};
        if (f.run(line, len, first, uint32_t(iterator_access::end(it) - first))) {
            fast_lines++;
            return st;
        }
        begin(line, len);
    }
    return walk_document(d);
}

static walker *make_walker(size_t max_line, size_t max_depth, size_t max_string, size_t max_choices, bw_choice *choices) {
    walker *w = new (std::nothrow) walker(max_line + BW_PADDING);
    if (!w) return nullptr;
    // Room for the longest line up front, so that parsing never allocates.
    if (w->parser.allocate(max_line + BW_PADDING, max_depth + 1) != simdjson::SUCCESS) {
        delete w;
        return nullptr;
    }
    w->max_depth = max_depth;
    w->max_string = max_string;
    w->max_choices = max_choices;
    w->choices = choices;
    return w;
}
static void destroy_walker(walker *w) { delete w; }
} // namespace bw_impl

struct bw_parser {
    bw_impl::walker *walker = nullptr;
    bw_choice *choices = nullptr;
};

extern "C" {

int bw_cpu_supported(void);

bw_status bw_parse(bw_parser *p, const uint8_t *line, size_t len, size_t capacity) {
    return p->walker->parse(line, len, capacity);
}

const bw_slot *bw_slots(const bw_parser *p) { return p->walker->slots; }

bw_parser *bw_parser_create(size_t max_line, size_t max_depth, size_t max_string, size_t max_choices) {
    if (!bw_cpu_supported()) return nullptr;
    bw_parser *p = new (std::nothrow) bw_parser();
    if (!p) return nullptr;
    p->choices = static_cast<bw_choice *>(std::calloc(max_choices ? max_choices : 1, sizeof(bw_choice)));
    if (!p->choices) { delete p; return nullptr; }
    p->walker = bw_impl::make_walker(max_line, max_depth, max_string, max_choices, p->choices);
    if (!p->walker) { std::free(p->choices); delete p; return nullptr; }
    return p;
}

void bw_parser_destroy(bw_parser *p) {
    if (!p) return;
    bw_impl::destroy_walker(p->walker);
    std::free(p->choices);
    delete p;
}

const bw_choice *bw_choices(const bw_parser *p) { return p->choices; }

void bw_parser_set_fast_path(bw_parser *p, int enabled) { p->walker->fast_enabled = enabled != 0; }

void bw_parser_path_counts(const bw_parser *p, uint64_t *fast, uint64_t *slow) {
    *fast = p->walker->fast_lines;
    *slow = p->walker->slow_lines;
}

const char *bw_simdjson_error_message(int32_t code) {
    return simdjson::error_message(simdjson::error_code(code));
}

const char *bw_implementation_name(const bw_parser *) {
#if BW_X86
    return "haswell";
#else
    return SIMDJSON_STRINGIFY(SIMDJSON_BUILTIN_IMPLEMENTATION);
#endif
}

const char *bw_stage1_implementation_name(const bw_parser *) {
    // On-Demand's parser made its stage 1 with the active implementation when it allocated, and Boardwalk never
    // changes the active one.
    return simdjson::get_active_implementation()->name().data();
}

} // extern "C"

#if BW_X86
#pragma clang attribute pop
#endif
