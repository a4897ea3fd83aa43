import Testing

@testable import BoardwalkQuery

// A name cut short (`ele`, `co`, `dur`) is suggested the one thing of the right kind it starts, which the
// edit-distance and abbreviation rules do not reach (`ele` is also an abbreviation of `email_collected`, so that rule
// finds three and gives up).

@Suite("Suggestions for names cut short")
struct ShortNameSuggestionsTests {
    @Test(
        "a prefix of one candidate, or of several that the shortest starts",
        arguments: [
            ("ele", ["element", "element_type", "email_collected", "event_id"], "element"),
            ("co", ["where", "count", "stats", "top"], "count"),
            ("dur", ["duration", "started", "ended"], "duration"),
            ("sc", ["screen", "screen_cid", "seq"], "screen"),
        ])
    func prefix(word: String, candidates: [String], expected: String) {
        #expect(Suggestions.closest(to: word, in: candidates) == expected)
    }

    @Test("no suggestion when the prefix is one letter or starts unrelated names")
    func ambiguousPrefixes() {
        #expect(Suggestions.closest(to: "p", in: ["p50", "p90", "percentile"]) == nil)
        #expect(Suggestions.closest(to: "pl", in: ["placement", "playtime"]) == nil)
    }

    @Test("in rendered diagnostics: fields for fields, stages for stages")
    func rendered() {
        #expect(
            diagnostic(#"events | where ele == "x""#).hasPrefix("error: unknown field `ele`; did you mean `element`?"))
        #expect(diagnostic("events | co").hasPrefix("error: unknown stage `co`; did you mean `count`?"))
        #expect(
            diagnostic("sessions | where dur > 5s | count").hasPrefix(
                "error: unknown field `dur`; did you mean `duration`?"))
        #expect(
            diagnostic("sessions | stats perc(duration, 0.5)").hasPrefix(
                "error: unknown aggregate `perc`; did you mean `percentile`?"))
    }
}

@Suite("No suggestion for words no name could be a typo of")
struct LongWordSuggestionsTests {
    @Test("a word up to the limit is compared; a longer one, a 1 MB literal included, is not")
    func longWords() {
        let name = String(repeating: "a", count: Suggestions.longestWord - 1)
        #expect(Suggestions.closest(to: name + "b", in: [name]) == name)
        #expect(Suggestions.closest(to: name + "bc", in: [name]) == nil)
        #expect(Suggestions.closest(to: String(repeating: "x", count: 1 << 20), in: ["screen_presented"]) == nil)
    }
}
